#!/usr/bin/env python3
"""Accuracy against one-thread predict CPU time on Fashion-MNIST for FlyNN settings
(docs/guide/performance.md, "Less work per query"; issue 21, part 3).

  python3 research/performance/fashion_work_per_query.py val  '{"default": {}, "s16": {"s": 16}}'
  python3 research/performance/fashion_work_per_query.py test '{"default": {}, "s16": {"s": 16}}' [ROUNDS]

"val" trains on rows 0-49999 of the training set and scores rows 50000-59999 (choices are
made there); "test" trains on all 60000 and scores the test set (reported only). Each
setting is keyword arguments of flynn.FlyNNClassifier; n_jobs is 1. Every setting is fitted
first; then ROUNDS rounds (default 2) each predict once with every setting in turn, so a
drift of the machine's speed reaches all settings alike. Prints one JSON line per setting:
accuracy, fit CPU seconds, predict CPU seconds (time.process_time; the median and the
lowest over the rounds), the median ratio of the first setting's predict time to this
one's within a round, and the resolved m, s, rho, variant. Needs the installed flynn
package and Debian's dataset-fashion-mnist.
"""
import json
import statistics
import sys
import time

import numpy as np

import flynn
import os
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from fashion_data import N_SPLIT, fashion_rows



def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("val", "test"):
        sys.exit(__doc__)
    split, settings = sys.argv[1], json.loads(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) == 4 else 2
    X, y = fashion_rows("train")
    if split == "val":
        Xtr, ytr, Xte, yte = X[:N_SPLIT], y[:N_SPLIT], X[N_SPLIT:], y[N_SPLIT:]
    else:
        Xtr, ytr = X, y
        Xte, yte = fashion_rows("t10k")
    fitted = {}
    for name, kw in settings.items():
        clf = flynn.FlyNNClassifier(n_jobs=1, **kw)
        t0 = time.process_time()
        clf.fit(Xtr, ytr)
        fitted[name] = (clf, time.process_time() - t0)
    times = {name: [] for name in settings}
    accuracy = {}
    for _ in range(rounds):
        for name, (clf, _) in fitted.items():
            t0 = time.process_time()
            pred = clf.predict(Xte)
            times[name].append(time.process_time() - t0)
            accuracy[name] = float((pred == yte).mean())
    first = next(iter(settings))
    for name, (clf, fit_s) in fitted.items():
        ratios = [a / b for a, b in zip(times[first], times[name])]
        print(json.dumps({"setting": name, "split": split, "accuracy": accuracy[name],
                          "fit_cpu_s": round(fit_s, 2),
                          "predict_cpu_s": round(statistics.median(times[name]), 3),
                          "predict_cpu_s_lowest": round(min(times[name]), 3),
                          f"{first}_over_this": round(statistics.median(ratios), 2),
                          "config": {k: clf.config_[k] for k in ("m", "s", "rho", "variant")}}),
              flush=True)


if __name__ == "__main__":
    main()
