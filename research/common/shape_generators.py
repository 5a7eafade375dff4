#!/usr/bin/env python3
"""Generated data of the kinds the OpenML suite lacks (issue 20): low-dimensional tables with
many classes, binary tables and one-hot coded categorical tables.

Each kind is a family of datasets drawn from a seed, so one family serves two purposes that
must not mix: seeds below VALIDATION_SEED_BASE are selection data (rules are chosen on
them), seeds from VALIDATION_SEED_BASE up are drawn afresh for reporting only.

  lowd      Gaussian mixtures: L in 10..30 classes of 1-3 blobs each in d in 2..16
            dimensions, features on different scales and offsets (as a table's columns
            are), some rounded to integers; the blob spread is set so the classes touch but
            1NN stays good (the shape of letter, vowel, pendigits).
  binary    d in 40..300 columns of 0/1: each class has 1-4 random prototypes (each bit on
            with probability p), a row is a prototype with every bit flipped with
            probability q, plus columns of pure noise.
  onehot    k in 20..80 categorical positions of c in 2..6 values each, one-hot coded
            (c columns of 0/1 per position, as DNA's 60 positions x 3 bits): each class has
            1-3 prototype strings, a row mutates each position with probability q; some
            positions carry no class signal.

usage: shape_generators.py OUT_DIR --kind lowd|binary|onehot --seeds 0-11
       (writes OUT_DIR/<kind>_<seed>.csv: header, label last; prints one line per set)
Uses numpy's PCG64 generator, so a seed gives the same file on every machine.
"""
import argparse
import os

import numpy as np

VALIDATION_SEED_BASE = 1000


def _rng(kind, seed):
    return np.random.Generator(np.random.PCG64([{"lowd": 1, "binary": 2, "onehot": 3}[kind], seed]))


def lowd(seed):
    g = _rng("lowd", seed)
    d = int(g.choice([2, 3, 4, 5, 6, 8, 10, 12, 16]))
    L = int(g.integers(10, 31))
    n = int(g.choice([1000, 2000, 5000, 10000]))
    blobs = g.integers(1, 4, size=L)
    centres = [g.uniform(0, 1, size=(b, d)) for b in blobs]
    allc = np.vstack(centres)
    # Typical distance between neighbouring centres, for the spread.
    dist = np.sqrt(((allc[:, None, :] - allc[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(dist, np.inf)
    nn = np.median(dist.min(1))
    sigma = nn * g.uniform(0.15, 0.35)
    # Per-class covariance: random axis scales (anisotropic blobs).
    y = g.integers(0, L, size=n)
    X = np.empty((n, d))
    for i in range(n):
        c = centres[y[i]][g.integers(0, blobs[y[i]])]
        X[i] = c + g.normal(0, sigma, size=d) * g.uniform(0.5, 1.5, size=d)
    scale = 10 ** g.uniform(-1, 2, size=d)
    offset = g.normal(0, 5, size=d) * scale
    X = X * scale + offset
    integer_cols = g.uniform(size=d) < 0.3
    X[:, integer_cols] = np.round(X[:, integer_cols] * 16 / scale[integer_cols]) * scale[integer_cols] / 16
    return X, y, {"d": d, "L": L, "n": n}


def binary(seed):
    g = _rng("binary", seed)
    d = int(g.choice([40, 60, 100, 150, 200, 300]))
    L = int(g.integers(2, 11))
    n = int(g.choice([500, 1000, 2000, 5000]))
    p = float(g.choice([0.1, 0.25, 0.5]))
    q = float(g.uniform(0.08, 0.3))
    informative = max(10, int(d * g.uniform(0.3, 1.0)))
    protos = [(g.uniform(size=(int(g.integers(1, 5)), informative)) < p) for _ in range(L)]
    y = g.integers(0, L, size=n)
    X = np.zeros((n, d), dtype=np.int64)
    for i in range(n):
        pr = protos[y[i]][g.integers(0, len(protos[y[i]]))]
        X[i, :informative] = pr ^ (g.uniform(size=informative) < q)
        X[i, informative:] = g.uniform(size=d - informative) < p
    perm = g.permutation(d)
    return X[:, perm], y, {"d": d, "L": L, "n": n, "p": p, "q": round(q, 3)}


def onehot(seed):
    g = _rng("onehot", seed)
    k = int(g.integers(20, 81))
    c = int(g.integers(2, 7))
    L = int(g.integers(2, 7))
    n = int(g.choice([500, 1000, 3000]))
    q = float(g.uniform(0.2, 0.6))
    signal = g.uniform(size=k) < g.uniform(0.3, 0.8)
    protos = [g.integers(0, c, size=(int(g.integers(1, 4)), k)) for _ in range(L)]
    y = g.integers(0, L, size=n)
    codes = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        pr = protos[y[i]][g.integers(0, len(protos[y[i]]))]
        mutate = (g.uniform(size=k) < q) | ~signal
        codes[i] = np.where(mutate, g.integers(0, c, size=k), pr)
    X = np.zeros((n, k * c), dtype=np.int64)
    X[np.arange(n)[:, None], np.arange(k)[None, :] * c + codes] = 1
    return X, y, {"d": k * c, "L": L, "n": n, "positions": k, "values": c, "q": round(q, 3)}


KINDS = {"lowd": lowd, "binary": binary, "onehot": onehot}


def write(path, X, y):
    with open(path, "w") as f:
        f.write(",".join(f"f{j}" for j in range(X.shape[1])) + ",class\n")
        integer = np.issubdtype(X.dtype, np.integer)
        for row, label in zip(X, y):
            cells = (str(int(v)) for v in row) if integer else (f"{v:.6g}" for v in row)
            f.write(",".join(cells) + f",c{label}\n")


def parse_seeds(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--kind", required=True, choices=sorted(KINDS))
    ap.add_argument("--seeds", required=True, help="e.g. 0-11 (selection) or 1000-1011 (validation)")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    for seed in parse_seeds(a.seeds):
        X, y, info = KINDS[a.kind](seed)
        path = os.path.join(a.out_dir, f"{a.kind}_{seed}.csv")
        write(path, X, y)
        group = "validation" if seed >= VALIDATION_SEED_BASE else "selection"
        print(f"{path}\t{group}\t" + " ".join(f"{k}={v}" for k, v in info.items()))


if __name__ == "__main__":
    main()
