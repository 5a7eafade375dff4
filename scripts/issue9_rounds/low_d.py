#!/usr/bin/env python3
"""The low-dimensional selection group (docs/defaults.md, "Second round"): k random
features (seeded by set and k) of each selection-half set, rows subsampled to ≤ 3000,
5-fold CV; FlyNN settings at m = 4096 (the floor) with several ρ.

usage: low_d.py OUT.jsonl [SETTINGS] [K,...]   (SETTINGS comma-separated names of CONF)
"""
import json
import sys

import numpy as np

from common import cv, default_m, half_names, load, paper_half, summed

CONF = {
    "zq+p": lambda m: paper_half("zsign-q", m),
    "ts+p": lambda m: paper_half("thermo-sign", m),
    "ts": lambda m: [("thermo-sign", {})],
    "zq": lambda m: [("zsign-q", {})],
    "ts+p_r256": lambda m: paper_half("thermo-sign", m, rho=256),
    "zq+p_r256": lambda m: paper_half("zsign-q", m, rho=256),
    "zq+p_r128": lambda m: paper_half("zsign-q", m, rho=128),
}

if __name__ == "__main__":
    which = sys.argv[2].split(",") if len(sys.argv) > 2 else [c for c in CONF if c != "zq+p_r128"]
    ks = [int(k) for k in sys.argv[3].split(",")] if len(sys.argv) > 3 else [4, 8]
    out = open(sys.argv[1], "a")
    for k in ks:
        for name in half_names("selection"):
            X, y = load(name)
            rng = np.random.default_rng(int(name) * 10 + k)
            if X.shape[1] <= k:
                continue
            X = X[:, rng.choice(X.shape[1], k, replace=False)]
            if len(y) > 3000:
                idx = rng.choice(len(y), 3000, replace=False)
                X, y = X[idx], y[idx]
            if np.unique(y, return_counts=True)[1].min() < 5:
                continue
            r = {"name": name, "k": k}
            for c in which:
                r[c] = cv(X, y, summed(CONF[c](default_m(k))))
            out.write(json.dumps(r) + "\n")
            out.flush()
