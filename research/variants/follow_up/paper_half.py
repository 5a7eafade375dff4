#!/usr/bin/env python3
"""Paper half vs zsign-q on the selection half (research/defaults/history.md, "Second round").

usage: paper_half.py OUT.jsonl   (appends one line per set: zq, zq+paper with two
full-size halves, zq+paper_half at the same m and ρ, paper)
"""
import json
import sys
import time

from common import cv, default_m, half_names, load, paper_half, summed

out = open(sys.argv[1], "a")
for name in half_names("selection"):
    X, y = load(name)
    m = default_m(X.shape[1])
    t = time.time()
    r = {"name": name, "d": X.shape[1],
         "zq": cv(X, y, summed([("zsign-q", {})])),
         "zq+paper": cv(X, y, summed([("zsign-q", {}), ("paper", {})])),
         "zq+paper_half": cv(X, y, summed(paper_half("zsign-q", m))),
         "paper": cv(X, y, summed([("paper", {})]))}
    r["sec"] = time.time() - t
    out.write(json.dumps(r) + "\n")
    out.flush()
