#!/usr/bin/python3
"""The library's second-order filters (`--pairs`, research/defaults/history.md "Twelfth round") on
Fashion-MNIST: accuracy, training and prediction time and model size, against today's
defaults, in one run on one machine.

Settings: the defaults, pairs = 4, and both with s = 32 (the cheaper hash the eleventh round
found to pay for the pair reads). Two protocols:
  --split  training rows 0–49999 train, 50000–59999 query (selection data: the rows the
           eleventh round chose its design on);
  --test   all 60000 training rows train, the test set is scored once (held out).
Times: training on all training rows with --threads threads; prediction of the query rows
in one batch on one thread (best of 3), per row; model bytes as saved.

Usage: research/pairs/pair_filters_fashion.py OUT.jsonl --split|--test [--threads 2]
Needs the Python package (pip install .) and numpy.
"""
import argparse
import json
import time

import numpy as np

import flynn
import os
import sys
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from fashion_data import fashion_rows

SETTINGS = [("default", {}), ("pairs4", {"pairs": 4}), ("s32", {"s": 32}), ("s32_pairs4", {"s": 32, "pairs": 4})]


def measure(name, given, Xtr, ytr, Xq, yq, threads):
    t0 = time.perf_counter()
    clf = flynn.FlyNNClassifier(n_jobs=threads, **given).fit(Xtr, ytr)
    train_seconds = time.perf_counter() - t0
    accuracy = float(np.mean(clf.predict(Xq) == yq))
    clf.set_params(n_jobs=1)
    clf._model.threads = 1
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        clf.predict(Xq)
        times.append(time.perf_counter() - t0)
    return {"setting": name, "given": given, "config": clf.config_, "accuracy": accuracy,
            "train_seconds": round(train_seconds, 2),
            "predict_us_per_row_1_thread": round(1e6 * min(times) / len(Xq), 1),
            "model_bytes": len(clf.to_bytes())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--split", action="store_true")
    which.add_argument("--test", action="store_true", help="held out: the test set, scored once per setting")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--settings", default=",".join(n for n, _ in SETTINGS))
    a = ap.parse_args()
    X, y = fashion_rows("train")
    if a.split:
        Xtr, ytr, Xq, yq, protocol = X[:50000], y[:50000], X[50000:], y[50000:], "split 0-49999 / 50000-59999"
    else:
        Xq, yq = fashion_rows("t10k")
        Xtr, ytr, protocol = X, y, "train 60000 / test 10000 (held out)"
    wanted = a.settings.split(",")
    for name, given in SETTINGS:
        if name not in wanted:
            continue
        rec = {"protocol": protocol, **measure(name, given, Xtr, ytr, Xq, yq, a.threads)}
        with open(a.out, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(name, rec["accuracy"], rec["train_seconds"], rec["predict_us_per_row_1_thread"], rec["model_bytes"],
              flush=True)


if __name__ == "__main__":
    main()
