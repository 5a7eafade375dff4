#!/usr/bin/python3
"""How strongly should `--class-weight balanced` weigh the small classes? (issue 20,
research/defaults/history.md "Tenth round"; measured, not adopted.)

A class weight w_l enters the filters as γ^{w_l·c}. `balanced` uses scikit-learn's
w_l = n / (L·n_l); this probe scores the same hashes with w_l^a for a ∈ {0, 0.5, 0.75, 1,
1.25, 1.5, 2} (a = 0: no weights, a = 1: balanced) and reports balanced accuracy against the
exact kNN tuned for balanced accuracy that `research/imbalanced/imbalanced_study.py` recorded
(research/imbalanced/anchor_defaults.jsonl) on the same sets. The folds are this script's own
(5-fold stratified, seed 0), so "a = 1" differs slightly from that study's figure.

Groups as in research/imbalanced/imbalanced_study.py: `tables` (selection data) and `validation` (the
OpenML validation half's imbalanced sets, reported only).

Usage: research/imbalanced/class_weight_exponent_probe.py [--group tables|validation|both] [--threads 2]
Needs the Python package (pip install .), pandas, scikit-learn.
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold

import flynn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
import imbalanced_study  # noqa: E402  (its set lists and imbalance rule)
from filter_scores import relative_table, scores  # noqa: E402

EXPONENTS = (0.0, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0)


def probe(path, label, threads):
    df = pd.read_csv(path, na_values=["NA", "?", ""], keep_default_na=False)
    label = label or df.columns[-1]
    X, y_text = df.drop(columns=[label]), df[label].astype(str).to_numpy()
    classes, y = np.unique(y_text, return_inverse=True)
    L = len(classes)
    preds = {a: np.empty(len(y), np.int64) for a in EXPONENTS}
    for train, test in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        clf = flynn.FlyNNClassifier(n_jobs=threads).fit(X.iloc[train], y[train])
        counts, rows = clf._model.counts()
        C, n = counts.astype(np.float64), rows.astype(np.float64)
        W = clf.hash(X.iloc[test]).astype(np.int64)
        g = clf.config_["gamma"]
        for a in EXPONENTS:
            w = (n.sum() / (L * np.maximum(n, 1))) ** a
            preds[a][test] = scores(relative_table(C, g, w), W).argmin(1)  # the default's scoring
    return ({a: float(balanced_accuracy_score(y, preds[a])) for a in EXPONENTS},
            {a: float(f1_score(y, preds[a], average="macro")) for a in EXPONENTS},
            {a: float(np.mean(preds[a] == y)) for a in EXPONENTS})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--group", default="both", choices=["tables", "validation", "both"])
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    knn = {}
    with open(os.path.join(HERE, "..", "imbalanced", "anchor_defaults.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            knn[r["set"]] = r["knn_balanced_accuracy"]
    groups = ["tables", "validation"] if a.group == "both" else [a.group]
    for group in groups:
        sets = imbalanced_study.tables() if group == "tables" else imbalanced_study.validation()
        rows, f1, acc = {}, {}, {}
        for name, path, label in sets:
            if name not in knn:  # not imbalanced (the study's rule)
                continue
            rows[name], f1[name], acc[name] = probe(path, label, a.threads)
        print(f"\n{group} ({len(rows)} sets): balanced accuracy − tuned kNN's, points")
        print("| exponent a | median | mean | sets ≥ kNN | median macro-F1 | median accuracy | "
              + " | ".join(rows) + " |")
        print("|---|---|---|---|---|---|" + "---|" * len(rows))
        for e in EXPONENTS:
            gaps = [100 * (rows[s][e] - knn[s]) for s in rows]
            print(f"| {e} | {statistics.median(gaps):+.2f} | {statistics.mean(gaps):+.2f} | "
                  f"{sum(g >= 0 for g in gaps)} of {len(gaps)} | "
                  f"{statistics.median(f1[s][e] for s in rows):.3f} | {statistics.median(acc[s][e] for s in rows):.3f} | "
                  + " | ".join(f"{g:+.1f}" for g in gaps) + " |")


if __name__ == "__main__":
    sys.exit(main())
