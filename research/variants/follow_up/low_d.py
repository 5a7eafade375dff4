#!/usr/bin/env python3
"""The low-dimensional selection group (research/defaults/history.md, "Second round"): k random
features (seeded by set and k) of each selection-half set, rows subsampled to ≤ 3000,
5-fold CV; FlyNN settings at m = 4096 (the floor) with several ρ.

Third round (the low-dimensional default, results in
research/variants/low_d_thermo_selection.jsonl):
  low_d.py OUT.jsonl default,ts_r4,ts+p_r4 4,8,6,2
"default" there is zsign-q+paper with the ρ rule max(64, ⌊m/(4k)⌋); "_r4" is ρ = m/4.
An interrupted run resumes: (set, k) pairs already in OUT are skipped.

usage: low_d.py OUT.jsonl [SETTINGS] [K,...]   (SETTINGS comma-separated names of CONF)
"""
import json
import os
import sys

import numpy as np

from common import cv, default_m, half_names, load, paper_half, summed

CONF = {  # name: (m, k) -> parts for summed()
    "zq+p": lambda m, k: paper_half("zsign-q", m),
    "ts+p": lambda m, k: paper_half("thermo-sign", m),
    "ts": lambda m, k: [("thermo-sign", {})],
    "zq": lambda m, k: [("zsign-q", {})],
    "ts+p_r256": lambda m, k: paper_half("thermo-sign", m, rho=256),
    "zq+p_r256": lambda m, k: paper_half("zsign-q", m, rho=256),
    "zq+p_r128": lambda m, k: paper_half("zsign-q", m, rho=128),
    "default": lambda m, k: paper_half("zsign-q", m, rho=max(64, m // (4 * k))),
    "ts_r4": lambda m, k: [("thermo-sign", dict(m=m, rho=m // 4))],
    "ts+p_r4": lambda m, k: paper_half("thermo-sign", m, rho=m // 4),
}

if __name__ == "__main__":
    which = sys.argv[2].split(",") if len(sys.argv) > 2 else [c for c in CONF if c != "zq+p_r128"]
    ks = [int(k) for k in sys.argv[3].split(",")] if len(sys.argv) > 3 else [4, 8]
    done = set()
    if os.path.exists(sys.argv[1]):
        with open(sys.argv[1]) as f:
            done = {(r["name"], r["k"]) for r in map(json.loads, f)}
    out = open(sys.argv[1], "a")
    for k in ks:
        for name in half_names("selection"):
            if (name, k) in done:
                continue
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
                r[c] = cv(X, y, summed(CONF[c](default_m(k), k)))
            out.write(json.dumps(r) + "\n")
            out.flush()
