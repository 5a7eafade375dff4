#!/usr/bin/python3
"""Third-order filters on Fashion-MNIST's selection split (research/defaults/history.md, "Twelfth round"):
do per-class counts of *triples* of winners add what pairs add? Winners ordered by a fixed
priority (as pair_codes_probe.py), each with the next r tuples of step j (i, i+j, i+2j),
mixed to 8m cells, scored relatively (γ 0.5) beside the units with weight w. Selection data
only (training rows 0–49999 / 50000–59999); prints the accuracies.

Usage: research/pairs/triple_codes_probe.py   (about 2 minutes; needs the Python package and numpy)
"""
import os
import sys
import time

import numpy as np

import flynn

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from fashion_data import fashion_rows  # noqa: E402
from filter_scores import class_counts, relative_table, scores  # noqa: E402
from pair_codes_probe import mix64  # noqa: E402

X, y = fashion_rows("train")
Xtr, ytr, Xq, yq = X[:50000], y[:50000], X[50000:], y[50000:]
clf = flynn.FlyNNClassifier(n_jobs=1).fit(Xtr, ytr)
m, gamma, L = clf.config_["m"], clf.config_["gamma"], 10
TW, QW = clf.hash(Xtr).astype(np.int64), clf.hash(Xq).astype(np.int64)
prio = np.random.default_rng(1).permutation(m)

def ordered(H):
    return np.take_along_axis(H, np.argsort(prio[H], axis=1), 1).astype(np.uint64)

def kcodes(H, k, r, M):
    A = ordered(H); rho = A.shape[1]
    cols = []
    for i in range(rho):
        for j in range(1, r + 1):
            idx = [i] + [(i + j * t) % rho for t in range(1, k)]  # step j tuples
            cols.append(idx)
    cols = np.array(cols)
    T = np.sort(A[:, cols], axis=2)
    key = np.zeros(T.shape[:2], dtype=np.uint64)
    for t in range(k):
        with np.errstate(over="ignore"):
            key = mix64(key * np.uint64(1000003) + T[:, :, t])
    return (key % np.uint64(M)).astype(np.int64)

unit = scores(relative_table(class_counts(TW, ytr, L, m), gamma), QW)
res = {"base": float(np.mean(unit.argmin(1) == yq))}
M = 8 * m
for k, r in [(2, 4), (3, 4), (3, 8)]:
    t0 = time.time()
    TP, QP = kcodes(TW, k, r, M), kcodes(QW, k, r, M)
    part = scores(relative_table(class_counts(TP, ytr, L, M), 0.5), QP)
    for w in (0.5, 1.0, 2.0):
        s = unit / QW.shape[1] + w * part / QP.shape[1]
        res[f"k{k}_r{r}_w{w}"] = float(np.mean(s.argmin(1) == yq))
    res[f"k{k}_r{r}_only"] = float(np.mean(part.argmin(1) == yq))
    print(k, r, round(time.time() - t0, 1), {kk: round(v, 4) for kk, v in res.items() if kk.startswith(f"k{k}_r{r}")}, flush=True)
    if k == 2 and r == 4:
        pair4 = part
# pairs + triples together
TP, QP = kcodes(TW, 3, 4, M), kcodes(QW, 3, 4, M)
tri = scores(relative_table(class_counts(TP, ytr, L, M), 0.5), QP)
for w2, w3 in [(0.5, 0.5), (1, 1), (1, 0.5), (0.5, 1)]:
    s = unit / QW.shape[1] + w2 * pair4 / (4 * QW.shape[1]) + w3 * tri / (4 * QW.shape[1])
    print("pairs+triples", w2, w3, round(float(np.mean(s.argmin(1) == yq)), 4))
print(res)
