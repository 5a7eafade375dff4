#!/usr/bin/env python3
"""Ensembles and class-size-aware decisions (issue 9's study list), on the selection half.

Protocol as the other rounds (common.py): 5-fold StratifiedKFold(shuffle, seed 0), rows
subsampled to at most 3000 (seeded by the set), the flynn Python package. Per set:
  default      one model with the defaults (argmin score)
  prior        the same model, class-size-aware decision: argmax of predict_proba, i.e.
               argmin score_l − ρ·t·log(prior_l) (t = the default temperature)
  ens3         three models with seeds 5489, 5490, 5491 and the default m, ρ: scores summed
               (their counts add exactly, so this is one model of 3m units; 3× the cost)
  ens3_cost    three models of m/3 units and ρ/3 winners each: the cost of one default model
  balanced     class-size-aware counts: each class's training rows counted round(n_max/n_l)
               times, so every class's filter holds about n_max rows' counts (counts
               scaled by an integer, exactly as replicated rows add them)

usage: ensembles.py OUT.jsonl   (resumes: sets already in OUT are skipped)
"""
import json
import os
import sys

import numpy as np

from common import half_names, load
import flynn
from sklearn.model_selection import StratifiedKFold


def run_set(X, y):
    acc = {k: [] for k in ("default", "prior", "ens3", "ens3_cost", "balanced")}
    for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        base = flynn.FlyNNClassifier().fit(X[tr], y[tr])
        s = base.scores(X[te])
        acc["default"].append(np.mean(base.classes_[np.argmin(s, 1)] == y[te]))
        p = base.predict_proba(X[te])
        acc["prior"].append(np.mean(base.classes_[np.argmax(p, 1)] == y[te]))
        m, rho = base.config_["m"], base.config_["rho"]
        total = s.copy()
        for seed in (5490, 5491):
            total += flynn.FlyNNClassifier(seed=seed).fit(X[tr], y[tr]).scores(X[te])
        acc["ens3"].append(np.mean(base.classes_[np.argmin(total, 1)] == y[te]))
        total = 0
        for seed in (5489, 5490, 5491):
            c = flynn.FlyNNClassifier(seed=seed, m=max(m // 3, 2), rho=max(rho // 3, 1)).fit(X[tr], y[tr])
            total = total + c.scores(X[te])
        acc["ens3_cost"].append(np.mean(base.classes_[np.argmin(total, 1)] == y[te]))
        classes, n = np.unique(y[tr], return_counts=True)
        reps = {c: max(1, int(round(n.max() / k))) for c, k in zip(classes, n)}
        idx = np.concatenate([np.repeat(i, reps[y[i]]) for i in tr])
        bal = flynn.FlyNNClassifier().fit(X[idx], y[idx])
        acc["balanced"].append(np.mean(bal.predict(X[te]) == y[te]))
    return {k: float(np.mean(v)) for k, v in acc.items()}


if __name__ == "__main__":
    done = set()
    if os.path.exists(sys.argv[1]):
        with open(sys.argv[1]) as f:
            done = {json.loads(line)["name"] for line in f}
    with open(sys.argv[1], "a") as out:
        for name in half_names("selection"):
            if name in done:
                continue
            X, y = load(name)
            if len(y) > 3000:
                idx = np.random.default_rng(int(name)).choice(len(y), 3000, replace=False)
                X, y = X[idx], y[idx]
            r = {"name": name, "d": int(X.shape[1])}
            r.update(run_set(X, y))
            out.write(json.dumps(r) + "\n")
            out.flush()
