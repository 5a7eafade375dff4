#!/usr/bin/python3
"""Does the paper half help when a few raw columns carry a row's energy? (research/defaults/history.md,
"Thirteenth round"). The default variant above 16 features, zsign-q+paper, hashes half the
units from the raw row, L2-normalised. When one or two columns dwarf the others (an income
in dollars beside one-hot columns), that normalised row is nearly the same direction for
every row, and the paper half's winners say little. A measure of it, from the training
statistics the standardised half already needs (mean and scale per column, exact sums):

    N_eff = (Σ_j e_j)² / Σ_j e_j²,   e_j = E[x_j²] = scale_j² + mean_j²  (a constant column's scale: 1)

the number of columns that carry the raw energy (d when all carry the same, 1 when one
carries all). The rule probed: for d > 16, zsign-q (every unit standardised) when
N_eff < τ, else the default. (Adopted with τ = 16 as FlyConfig::paper_half_min_columns,
where the second half then hashes the row as the first half does; the library's default
since is measured directly with shapes_study.py's `default` against an older build's.)

Modes:
  neff    N_eff of every set of the named groups (as research/defaults/shapes_study.py names and reads
          them; text columns one-hot, missing cells the column mean), cached in OUT.json
  rule    from shapes_study.py results (settings default and zsign-q, and their kNN) and the
          cache: each group's gap to tuned kNN (median / mean / worst, points) under the
          rule for each τ (τ = 0: today's default; τ = inf: zsign-q wherever d > 16)
  balanced  the same with settings balanced and zsign-q_balanced, as balanced accuracy
          against the kNN tuned for balanced accuracy of research/imbalanced/wide_units_defaults.jsonl
          (the imbalanced study's sets only)

Usage: research/defaults/raw_energy_probe.py neff OUT.json --groups openml-sel,tables --data-dir DIR
       research/defaults/raw_energy_probe.py rule OUT.json RESULTS.jsonl [RESULTS2.jsonl ...]
       research/defaults/raw_energy_probe.py balanced OUT.json RESULTS.jsonl [...]
(DIR: the shapes_study folder whose data/ holds the groups' cached files.) Choose τ on the
selection groups; read the validation groups only for the report.
"""
import argparse
import json
import os
import statistics
import sys

import numpy as np
import pandas as pd

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
import shapes_study  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TAUS = [0, 2, 4, 8, 16, 32, float("inf")]


def encoded_columns(df):
    """The columns as flynn's loader gives them: numbers as they are (missing → the
    column's mean), text columns one-hot."""
    cols = []
    for c in df.columns:
        v = df[c]
        if v.dtype == object:
            cols.append(pd.get_dummies(v.astype(str).where(v.notna(), None), dtype=float).values)
        else:
            x = v.astype(float).values
            mean = np.nanmean(x) if np.isfinite(x).any() else 0.0
            cols.append(np.where(np.isnan(x), mean, x)[:, None])
    return np.hstack(cols)


def raw_energy_columns(X):
    """As the library computes it from the training statistics (raw_energy_columns in
    include/flynn/feature_stats.hpp): e_j = scale_j² + mean_j², a constant column's scale 1."""
    var = X.var(0)
    e = X.mean(0) ** 2 + np.where(var > 0, var, 1.0)
    return float(e.sum() ** 2 / (e ** 2).sum()) if e.sum() > 0 else 0.0


def file_neff(path, flags):
    df = pd.read_csv(path, na_values=["NA"])
    label = flags[flags.index("--label-col") + 1] if "--label-col" in flags else df.columns[-1]
    drop = [label] + ([flags[flags.index("--ignore-cols") + 1]] if "--ignore-cols" in flags else [])
    X = encoded_columns(df.drop(columns=drop))
    return raw_energy_columns(X), X.shape[1]


def run_neff(a):
    cache = json.load(open(a.out)) if os.path.exists(a.out) else {}
    for group in a.groups.split(","):
        for name, path, flags in shapes_study.group_sets(group, a.data_dir):
            key = f"{group}/{name}"
            if key not in cache:
                cache[key] = file_neff(path, flags)
                print(f"{cache[key][0]:9.2f} {cache[key][1]:5d}  {key}", flush=True)
        with open(a.out, "w") as f:
            json.dump(cache, f, indent=0)


def results(files):
    out = {}
    for path in files:
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                out.setdefault((r["group"], r["dataset"]), {})[r["setting"]] = r
    return out


def switched(neff, group, name, d, tau):
    return d > 16 and neff.get(f"{group}/{name}", [float("inf")])[0] < tau


def run_rule(a):
    neff, R = json.load(open(a.out)), results(a.results)
    for group in sorted({g for g, _ in R}):
        keys = [k for k in R if k[0] == group and {"default", "zsign-q", "knn"} <= set(R[k])]
        if not keys:
            continue
        print(f"\n{group} ({len(keys)} sets): gap to tuned kNN, median / mean / worst; sets switched")
        for tau in TAUS:
            gaps, moved = [], []
            for k in keys:
                v = R[k]
                use = "zsign-q" if switched(neff, group, k[1], v["knn"]["d"], tau) else "default"
                gaps.append(100 * (v["knn"]["accuracy"] - v[use]["accuracy"]))
                if use != "default":
                    moved.append(f"{k[1]} {100 * (v[use]['accuracy'] - v['default']['accuracy']):+.2f}")
            print(f"  tau {tau:>4}: {statistics.median(gaps):5.2f} / {statistics.mean(gaps):5.2f} / "
                  f"{max(gaps):5.1f}; {len(moved)} switched" + (f" ({', '.join(moved)})" if a.verbose else ""))


def study_name(name):
    """The imbalanced study names OpenML sets without their id (182_satimage → satimage)."""
    head, _, rest = name.partition("_")
    return rest if head.isdigit() and rest else name


def run_balanced(a):
    neff, R = json.load(open(a.out)), results(a.results)
    knn = {}
    with open(os.path.join(HERE, "..", "imbalanced", "wide_units_defaults.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            knn[r["set"]] = r["knn_balanced_accuracy"]
    for group in sorted({g for g, _ in R}):
        keys = [k for k in R if k[0] == group and {"balanced", "zsign-q_balanced"} <= set(R[k])
                and study_name(k[1]) in knn]
        if not keys:
            continue
        print(f"\n{group} ({len(keys)} imbalanced sets): balanced accuracy − kNN's, median / mean, sets ≥ kNN")
        for tau in (0, 8, 16, float("inf")):
            gaps, below = [], []
            for k in keys:
                v = R[k]
                use = "zsign-q_balanced" if switched(neff, group, k[1], v["knn"]["d"], tau) else "balanced"
                gap = 100 * (v[use]["balanced_accuracy"] - knn[study_name(k[1])])
                gaps.append(gap)
                if gap < 0:
                    below.append(f"{k[1]} {gap:+.2f}{' (switched)' if use != 'balanced' else ''}")
            print(f"  tau {tau:>4}: {statistics.median(gaps):+5.2f} / {statistics.mean(gaps):+5.2f}, "
                  f"{sum(g >= 0 for g in gaps)}/{len(gaps)}; below: {', '.join(below)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=["neff", "rule", "balanced"])
    ap.add_argument("out", help="the N_eff cache (JSON)")
    ap.add_argument("results", nargs="*", help="shapes_study.py results.jsonl files")
    ap.add_argument("--groups", default="openml-sel,tables")
    ap.add_argument("--data-dir", default=".")
    ap.add_argument("--verbose", action="store_true", help="rule: name the switched sets and their change")
    a = ap.parse_args()
    {"neff": run_neff, "rule": run_rule, "balanced": run_balanced}[a.mode](a)


if __name__ == "__main__":
    main()
