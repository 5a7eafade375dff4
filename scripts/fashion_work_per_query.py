#!/usr/bin/env python3
"""Accuracy against one-thread predict CPU time on Fashion-MNIST for FlyNN settings
(docs/performance.md, "Less work per query"; issue 21, part 3).

  python3 scripts/fashion_work_per_query.py val  '{"default": {}, "s16": {"s": 16}}'
  python3 scripts/fashion_work_per_query.py test '{"default": {}, "s16": {"s": 16}}'

"val" trains on rows 0-49999 of the training set and scores rows 50000-59999 (choices are
made there); "test" trains on all 60000 and scores the test set (reported only). Each
setting is keyword arguments of flynn.FlyNNClassifier; n_jobs is 1. Prints one JSON line per
setting: accuracy, fit and predict CPU seconds (time.process_time, predict the lower of two
calls) and the resolved m, s, rho, variant. Needs the installed flynn package and Debian's
dataset-fashion-mnist.
"""
import gzip
import json
import sys
import time

import numpy as np

import flynn

FASHION = "/usr/share/datasets/fashion-mnist/"


def idx(name, offset):
    with gzip.open(FASHION + name) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("val", "test"):
        sys.exit(__doc__)
    split, settings = sys.argv[1], json.loads(sys.argv[2])
    X = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    y = idx("train-labels-idx1-ubyte.gz", 8)
    if split == "val":
        Xtr, ytr, Xte, yte = X[:50000], y[:50000], X[50000:], y[50000:]
    else:
        Xtr, ytr = X, y
        Xte = idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 784)
        yte = idx("t10k-labels-idx1-ubyte.gz", 8)
    for name, kw in settings.items():
        clf = flynn.FlyNNClassifier(n_jobs=1, **kw)
        t0 = time.process_time()
        clf.fit(Xtr, ytr)
        fit_s = time.process_time() - t0
        best = float("inf")
        for _ in range(2):
            t0 = time.process_time()
            pred = clf.predict(Xte)
            best = min(best, time.process_time() - t0)
        print(json.dumps({"setting": name, "split": split, "accuracy": float((pred == yte).mean()),
                          "fit_cpu_s": round(fit_s, 2), "predict_cpu_s": round(best, 3),
                          "config": {k: clf.config_[k] for k in ("m", "s", "rho", "variant")}}),
              flush=True)


if __name__ == "__main__":
    main()
