#!/usr/bin/python3
"""Other forms of per-class filters on Fashion-MNIST's selection split (research/defaults/history.md,
"Thirteenth round"): is anything still counted per class, one pass of integer sums, above
the pairs' ≈ 0.841? Four families, each scored with the library's relative scoring
(filter_scores.py) beside the default unit filters:

  query   the query's winners read beyond its ρ (the ρ' = 192 … 512 most active units, in
          tiers of activation rank, flat or with falling weights), against filters counted
          with ρ_t = 64, 128 or 256 winners per training row: asymmetric top-k;
  top     pairs of the K most active winners of a row, all K(K−1)/2 of them (K 16, 32, 48),
          instead of the twelfth round's fixed-order pairs (each winner with the next r);
  cells   the twelfth round's pairs (r = 4, 8) in 32·m cells instead of 8·m: do collisions
          in the pair block cost accuracy?
  local   local filters: each row's units counted under a region of the hash space (the
          winner of least priority among its K most active winners, T independent
          priorities): a class's filter per region, as an IVF list is per region.

The activation rank comes from the library itself: a model with ρ' winners (the same m, s,
seed and, fitted on the same rows, the same standardisation) returns the ρ' most active
units, a superset of the ρ most active (checked). Selection data only: training rows
0–49999 count, rows 50000–59999 are the queries; the test set is not read. Prints one line
per design (accuracy of units + w · the design's part, for each w, and of the part alone).

Usage: research/fashion/fashion_filter_forms_probe.py [--families query,top,cells,local]
       (about 6 minutes on 2 cores; needs the Python package and numpy)
"""
import argparse
import os
import sys

import numpy as np

import flynn

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from fashion_data import N_SPLIT, fashion_rows  # noqa: E402
from filter_scores import class_counts, relative_table, scores  # noqa: E402
from pair_codes_probe import mix64, pair_codes  # noqa: E402

L = 10
WEIGHTS = (0.5, 1.0, 2.0)


def accuracy(s, y):
    return round(float(np.mean(s.argmin(1) == y)), 4)


def most_active(Xtr, ytr, Xq, rhos, threads):
    """{ρ: (training rows' winners, queries' winners)}: each row's ρ most active units."""
    out = {}
    for rho in rhos:
        clf = flynn.FlyNNClassifier(n_jobs=threads, rho=rho).fit(Xtr, ytr)
        out[rho] = (clf.hash(Xtr).astype(np.int64), clf.hash(Xq).astype(np.int64))
    return out, clf.config_["m"], clf.config_["gamma"]


def rank_tiers(Q, sizes):
    """The queries' winners split by activation rank: tier i holds the units ranked between
    sizes[i-1] and sizes[i] (each Q[size] contains Q[smaller size])."""
    tiers, prev = [], None
    for k in sizes:
        q = Q[k]
        if prev is None:
            tiers.append(q)
        else:
            new = np.array([~np.isin(q[i], prev[i]) for i in range(len(q))])
            tiers.append(q[new].reshape(len(q), k - prev.shape[1]))
        prev = q
    return tiers


def family_query(H, ytr, yq, m):
    sizes = [32, 64, 128, 192, 256, 384, 512]
    tiers = rank_tiers({k: H[k][1] for k in sizes}, sizes)
    plans = {"q64": [1, 1], "q128": [1, 1, 1], "q192": [1] * 4, "q256": [1] * 5, "q384": [1] * 6,
             "q512": [1] * 7, "falling256": [1, .9, .75, .5, .3], "falling384": [1, .9, .8, .6, .45, .25],
             "falling512": [1, .95, .85, .7, .55, .35, .15], "top_heavy": [2, 1.5, 1, .6, .4, .2, .1]}
    for rho_t in (64, 128, 256):
        C = class_counts(H[rho_t][0], ytr, L, m)
        for g in (0.6, 0.7, 0.8, 0.9):
            per_tier = [scores(relative_table(C, g), t) for t in tiers]
            res = {name: accuracy(sum(w * s for w, s in zip(plan, per_tier)), yq) for name, plan in plans.items()}
            print(f"query rho_train={rho_t} gamma={g}", res, flush=True)


def all_pairs(H, m, M):
    i, j = np.triu_indices(H.shape[1], 1)
    a, b = H[:, i].astype(np.uint64), H[:, j].astype(np.uint64)
    return (mix64(np.minimum(a, b) * np.uint64(m) + np.maximum(a, b)) % np.uint64(M)).astype(np.int64)


def report(name, unit, part, yq):
    res = {w: accuracy(unit / 128 + w * part, yq) for w in WEIGHTS}
    res["alone"] = accuracy(part, yq)
    print(name, res, flush=True)


def family_top(H, ytr, yq, m, unit):
    M = 8 * m
    for K in (16, 32, 48):
        tp, qp = all_pairs(H[K][0], m, M), all_pairs(H[K][1], m, M)
        for g in (0.3, 0.5, 0.7):
            report(f"top K={K} gamma={g}", unit, scores(relative_table(class_counts(tp, ytr, L, M), g), qp) / qp.shape[1], yq)


def family_cells(H, ytr, yq, m, unit, seed):
    for r in (4, 8):
        for k in (8, 32):
            M = k * m
            tp, qp = pair_codes(H[128][0], m, r, M, seed), pair_codes(H[128][1], m, r, M, seed)
            report(f"cells r={r} M={k}m", unit, scores(relative_table(class_counts(tp, ytr, L, M), 0.5), qp) / qp.shape[1], yq)


def local_codes(top, winners, t, m, M, seed):
    priority = np.random.default_rng(seed + t).permutation(m)
    region = top[np.arange(len(top)), priority[top].argmin(1)].astype(np.uint64)
    key = region[:, None] * np.uint64(m) + winners.astype(np.uint64) + np.uint64(t) * np.uint64(1 << 40)
    return (mix64(key) % np.uint64(M)).astype(np.int64)


def family_local(H, ytr, yq, m, unit, seed):
    M = 8 * m
    for K in (16, 32):
        for T in (1, 4):
            tp = np.concatenate([local_codes(H[K][0], H[128][0], t, m, M, seed) for t in range(T)], 1)
            qp = np.concatenate([local_codes(H[K][1], H[128][1], t, m, M, seed) for t in range(T)], 1)
            for g in (0.5, 0.8):
                report(f"local K={K} T={T} gamma={g}", unit,
                       scores(relative_table(class_counts(tp, ytr, L, M), g), qp) / qp.shape[1], yq)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", default="query,top,cells,local")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=5489)
    a = ap.parse_args()
    families = a.families.split(",")
    X, y = fashion_rows("train")
    Xtr, ytr, Xq, yq = X[:N_SPLIT], y[:N_SPLIT], X[N_SPLIT:], y[N_SPLIT:]
    rhos = sorted({128} | ({32, 64, 192, 256, 384, 512} if "query" in families else set())
                  | ({16, 32, 48} if {"top", "local"} & set(families) else set()))
    H, m, gamma = most_active(Xtr, ytr, Xq, rhos, a.threads)
    nested = all(np.isin(H[small][1][i], H[large][1][i]).all()
                 for small, large in zip(rhos, rhos[1:]) for i in range(200))
    print("winners nest by activation rank:", nested, flush=True)
    unit = scores(relative_table(class_counts(H[128][0], ytr, L, m), gamma), H[128][1])
    print("defaults (units only):", accuracy(unit, yq), flush=True)
    if "query" in families:
        family_query(H, ytr, yq, m)
    if "top" in families:
        family_top(H, ytr, yq, m, unit)
    if "cells" in families:
        family_cells(H, ytr, yq, m, unit, a.seed)
    if "local" in families:
        family_local(H, ytr, yq, m, unit, a.seed)


if __name__ == "__main__":
    main()
