#!/usr/bin/python3
"""Issue 20, sixteenth round (research/defaults/history.md): would FlyHash units with *local receptive
fields* (each unit reads s pixels of one patch of the image, as a convolutional feature
does) keep more of Fashion-MNIST's classes than units reading s pixels anywhere?

Selection split only (training rows 0–49999 count, 50000–59999 query; the test set is not
read). A plain numpy FlyHash in the defaults' first-half form (z-scores clipped at ±6,
signed lifting with a ±1 per sampled pixel, top-ρ winners, one relative filter per class
as filter_scores.py scores it), so that only the sampling differs between designs:
  global       s pixels anywhere (the library's sampling);
  local w      s pixels of one w×w patch at a random centre;
  regions G    units in G blocks, each block's patches centred in one cell of a √G×√G grid
               of the image, and ρ/G winners taken per block (w = 0: global sampling with
               per-block winners, the control).
m = 16384 and ρ = 32 (a smaller hash than the defaults', for numpy's sake), γ 0.5 / 0.8 / 0.9.

usage: research/fashion/fashion_local_fields_probe.py OUT.jsonl   (about 4 minutes on 2 cores)
Needs numpy and dataset-fashion-mnist.
"""
import json
import sys
import time

import numpy as np

import os
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from fashion_data import N_SPLIT, fashion_rows
from filter_scores import class_counts, relative_table, scores

M, RHO = 16384, 32


def encoded_split():
    X, y = fashion_rows("train")
    X = X.astype(np.float32)
    mu, sd = X[:N_SPLIT].mean(0), X[:N_SPLIT].std(0)
    sd[sd == 0] = 1
    Z = np.clip((X - mu) / sd, -6, 6).astype(np.float32)
    return Z[:N_SPLIT], y[:N_SPLIT], Z[N_SPLIT:], y[N_SPLIT:]


def patch(rng, r0, c0, w, s):
    """s distinct pixels of the w×w patch around (r0, c0), moved inside the image."""
    h = w // 2
    r_lo, c_lo = max(0, min(r0 - h, 28 - w)), max(0, min(c0 - h, 28 - w))
    rr, cc = np.divmod(np.arange(784), 28)
    cand = np.nonzero((rr >= r_lo) & (rr < r_lo + w) & (cc >= c_lo) & (cc < c_lo + w))[0]
    return rng.choice(cand, min(s, len(cand)), replace=False)


def lifting(s, w, G, rng):
    """784 × M signed sampling matrix; units in G blocks of M/G (G = 1: one block)."""
    P = np.zeros((784, M), np.float32)
    k, per = int(round(G ** 0.5)), M // G
    cell = 28 / k
    for g in range(G):
        gr, gc = divmod(g, k)
        for j in range(g * per, (g + 1) * per):
            if w == 0:
                f = rng.choice(784, s, replace=False)
            elif G == 1:
                f = patch(rng, *rng.integers(0, 28, 2), w, s)
            else:
                f = patch(rng, int(rng.uniform(gr * cell, (gr + 1) * cell)),
                          int(rng.uniform(gc * cell, (gc + 1) * cell)), w, s)
            P[f, j] = rng.choice([-1.0, 1.0], len(f))
    return P


def winners(Z, P, G):
    per, k = M // G, RHO // G
    out = np.empty((len(Z), RHO), np.int64)
    for i in range(0, len(Z), 2000):
        A = (Z[i:i + 2000] @ P).reshape(-1, G, per)
        idx = np.argpartition(-A, k, axis=2)[:, :, :k] + (np.arange(G) * per)[None, :, None]
        out[i:i + 2000] = idx.reshape(len(A), -1)
    return out


DESIGNS = [  # (name, s, w, G)
    ("global", 64, 0, 1), ("local w8", 48, 8, 1), ("local w10", 64, 10, 1), ("local w14", 64, 14, 1),
    ("local w6", 24, 6, 1), ("regions 16, global", 64, 0, 16), ("regions 16, w10", 64, 10, 16),
    ("regions 16, w14", 64, 14, 16), ("regions 16, w8", 48, 8, 16),
]


def main():
    out = sys.argv[1]
    Ztr, ytr, Zq, yq = encoded_split()
    for name, s, w, G in DESIGNS:
        t = time.time()
        P = lifting(s, w, G, np.random.default_rng(0))
        Wtr, Wq = winners(Ztr, P, G), winners(Zq, P, G)
        C = class_counts(Wtr, ytr, 10, M)
        acc = {str(g): float(np.mean(scores(relative_table(C, g), Wq).argmin(1) == yq)) for g in (0.5, 0.8, 0.9)}
        rec = dict(design=name, m=M, rho=RHO, s=s, w=w, blocks=G, accuracy=acc, seconds=round(time.time() - t, 1))
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
