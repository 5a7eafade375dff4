#!/usr/bin/python3
"""How much does FlyHash's tie rule cost on binary tables? (issue 20, research/defaults/history.md
"Tenth round"; measured, nothing adopted.)

On 0/1 data a unit's activation is a small integer, so many units tie at the winner-take-all
threshold; the library breaks ties by a unit order rotated by a hash of the row (fly_hasher.hpp),
which also re-draws the tie winners when one bit of the row changes.

1. The library: for each generated selection binary set given, the share of a row's winners
   kept when one random bit of each row is flipped (FlyNNClassifier.hash), per variant.
2. An emulation of the paper's hash (binary lifting, s columns per unit, m/2 units, ρ = 64:
   the paper half of the default) with ties broken by a random order per row (as the
   rotation does for unrelated rows) or by one fixed order for all rows: the winners kept
   under a one-bit flip, and 5-fold accuracy of relative filters (γ = 0.8) on its hashes.

Usage: research/defaults/tie_rule_probe.py OUT_DIR_OF_shapes_study [--seeds 0,1,2,3]
(the generated sets are OUT/data/generated/binary_SEED.csv, as research/defaults/shapes_study.py
writes them; generated on demand with research/common/shape_generators.py).
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import scipy.sparse as sp

import flynn
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from filter_scores import class_counts, relative_table, scores

HERE = os.path.dirname(os.path.abspath(__file__))


def flip_one_bit(X, rng):
    X2 = X.copy()
    j = rng.integers(0, X.shape[1], len(X))
    X2[np.arange(len(X)), j] = 1 - X2[np.arange(len(X)), j]
    return X2


def kept(W, W2):
    return float(np.mean([len(np.intersect1d(a, b)) for a, b in zip(W, W2)]) / W.shape[1])


def emulated_hash(A, key, rho):
    return np.argpartition(-(A + 0.5 * key), rho, axis=1)[:, :rho]  # key < 1 only breaks ties


def filters_cv(H, y, m, gamma=0.8):
    L = y.max() + 1
    rng = np.random.default_rng(0)
    fold = np.empty(len(y), int)
    for c in range(L):
        idx = np.where(y == c)[0]
        rng.shuffle(idx)
        fold[idx] = np.arange(len(idx)) % 5
    right = 0
    for k in range(5):
        C = class_counts(H[fold != k], y[fold != k], L, m)
        right += int(np.sum(scores(relative_table(C, gamma), H[fold == k]).argmin(1) == y[fold == k]))
    return right / len(y)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--seeds", default="0,1,2,3")
    a = ap.parse_args()
    cache = os.path.join(a.out, "data", "generated")
    seeds = a.seeds.split(",")
    missing = [s for s in seeds if not os.path.exists(os.path.join(cache, f"binary_{s}.csv"))]
    if missing:
        os.makedirs(cache, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "..", "common", "shape_generators.py"), cache, "--kind", "binary",
                        "--seeds", ",".join(missing)], check=True)
    print("| set | d | winners kept, one bit flipped: zsign-q+paper / paper / zsign-q | emulated paper half: "
          "kept, per-row order → fixed order | its accuracy, per-row → fixed |")
    print("|---|---|---|---|---|")
    for seed in seeds:
        df = pd.read_csv(os.path.join(cache, f"binary_{seed}.csv"))
        X = df.iloc[:, :-1].to_numpy(np.float32)
        y = pd.factorize(df.iloc[:, -1])[0]
        rng = np.random.default_rng(0)
        X2 = flip_one_bit(X, rng)
        lib = []
        for variant in ("zsign-q+paper", "paper", "zsign-q"):
            clf = flynn.FlyNNClassifier(variant=variant).fit(X, y)
            lib.append(kept(clf.hash(X), clf.hash(X2)))
        n, d = X.shape
        m, s, rho = min(max(256 * d, 4096), 131072) // 2, min(max(2, int(0.3 * d)), 64), 64
        cols = np.stack([rng.choice(d, s, replace=False) for _ in range(m)])
        M = sp.csr_matrix((np.ones(m * s), cols.ravel(), np.arange(0, m * s + 1, s)), shape=(m, d))
        A, A2 = (M @ X.T.astype(np.float64)).T, (M @ X2.T.astype(np.float64)).T
        fixed = rng.random(m)
        per_row = emulated_hash(A, rng.random((n, m)), rho), emulated_hash(A2, rng.random((n, m)), rho)
        one_order = emulated_hash(A, fixed, rho), emulated_hash(A2, fixed, rho)
        print(f"| binary_{seed} | {d} | {' / '.join(f'{v:.3f}' for v in lib)} | "
              f"{kept(*per_row):.3f} → {kept(*one_order):.3f} | "
              f"{filters_cv(per_row[0], y, m):.3f} → {filters_cv(one_order[0], y, m):.3f} |")


if __name__ == "__main__":
    sys.exit(main())
