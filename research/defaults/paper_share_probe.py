#!/usr/bin/python3
"""Uneven winners between the default's two halves (issue 20, research/defaults/history.md "Tenth
round"; a probe, nothing adopted).

The default zsign-q+paper hashes half the m units from the standardised row (zsign-q) and
half from the raw row (the paper's method), and gives each half ρ/2 winners. The tenth
round found that more winners help the standardised half (tables, binary, one-hot) while
the paper half is what reads a row's shape (hill-valley) and loses with more winners. This
probe builds the two halves as separate models (FlyNNClassifier with variant zsign-q and
paper, m/2 units each, the default's s; the halves' seeds differ), hashes every row with
each, joins the winners (the paper half's shifted by m/2, as the library does), counts them
per class on each fold's training rows and scores relatively with γ = 0.8, as the default.
Settings "Z+P" = winners of the zsign-q half + winners of the paper half:
  64+64 (the default's split of ρ = 128), 128+128 (ρ = 256), 192+64, 128+64.
Reported: 5-fold accuracy (its own folds) and the gap to the tuned kNN recorded for the set
in a research/defaults/shapes_study.py results file.

Usage: research/defaults/paper_share_probe.py SHAPES_OUT --groups tables,binary [--out FILE.jsonl]
       [--summary]   (SHAPES_OUT: a shapes_study folder with results.jsonl holding the kNN
       records, and the data it generated)
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

import flynn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
import shapes_study  # noqa: E402  (its groups and data)
from filter_scores import class_counts, relative_table, scores  # noqa: E402

SPLITS = [(64, 64), (128, 128), (192, 64), (128, 64)]


def read(path, flags):
    df = pd.read_csv(path, na_values=["NA", "?", ""], keep_default_na=False)
    label = flags[flags.index("--label-col") + 1] if "--label-col" in flags else df.columns[-1]
    drop = [label] + ([flags[flags.index("--ignore-cols") + 1]] if "--ignore-cols" in flags else [])
    return df.drop(columns=drop), pd.factorize(df[label].astype(str))[0]


def probe(X, y, d):
    out = {f"{z}+{p}": np.empty(len(y), np.int64) for z, p in SPLITS}
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        Xtr, Xte = X.iloc[train], X.iloc[test]
        config = flynn._flynn.HyperParams().resolve(d, int(y.max()) + 1)  # the default's m and s
        m, s = config["m"], config["s"]
        half = m // 2
        hashes = {}
        for variant, seed, rhos in (("zsign-q", 5489, {z for z, _ in SPLITS}), ("paper", 5490, {p for _, p in SPLITS})):
            for rho in rhos:
                clf = flynn.FlyNNClassifier(variant=variant, m=half, s=s, rho=rho, seed=seed).fit(Xtr, y[train])
                shift = 0 if variant == "zsign-q" else half
                hashes[(variant, rho)] = (clf.hash(Xtr).astype(np.int64) + shift, clf.hash(Xte).astype(np.int64) + shift)
        L = y.max() + 1
        for z, p in SPLITS:
            Htr = np.hstack([hashes[("zsign-q", z)][0], hashes[("paper", p)][0]])
            Hte = np.hstack([hashes[("zsign-q", z)][1], hashes[("paper", p)][1]])
            C = class_counts(Htr, y[train], L, 2 * half)
            out[f"{z}+{p}"][test] = scores(relative_table(C, 0.8), Hte).argmin(1)
    return {k: float(np.mean(v == y)) for k, v in out.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shapes_out")
    ap.add_argument("--groups", default="tables,binary,onehot,openml-sel")
    ap.add_argument("--out", default="")
    ap.add_argument("--summary", action="store_true")
    a = ap.parse_args()
    out = a.out or os.path.join(a.shapes_out, "paper_share.jsonl")
    knn, done = {}, {}
    for line in open(os.path.join(a.shapes_out, "results.jsonl")):
        r = json.loads(line)
        if r["setting"] == "knn" and "accuracy" in r:
            knn[r["dataset"]] = r
    if os.path.exists(out):
        for line in open(out):
            r = json.loads(line)
            done[r["dataset"]] = r
    for group in a.groups.split(","):
        sets = shapes_study.group_sets(group, a.shapes_out)
        if not a.summary:
            for name, path, flags in sets:
                if name in done or name not in knn or knn[name]["d"] <= 16:
                    continue  # d ≤ 16 takes the anchor variant, not the halves
                X, y = read(path, flags)
                rec = {"dataset": name, "group": group, "d": knn[name]["d"], **probe(X, y, knn[name]["d"])}
                done[name] = rec
                with open(out, "a") as f:
                    f.write(json.dumps(rec) + "\n")
        rows = [done[n] for n, _, _ in sets if n in done]
        if not rows:
            continue
        print(f"\n{group} ({len(rows)} sets with d > 16): gap to tuned kNN, points, median / mean / worst")
        for z, p in SPLITS:
            k = f"{z}+{p}"
            gaps = [100 * (knn[r["dataset"]]["accuracy"] - r[k]) for r in rows]
            print(f"  {k:8s} {statistics.median(gaps):6.2f} / {statistics.mean(gaps):6.2f} / {max(gaps):6.1f}")


if __name__ == "__main__":
    sys.exit(main())
