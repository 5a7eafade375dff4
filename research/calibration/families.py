#!/usr/bin/python3
"""Which family of calibrations, and which rule for choosing one, on the SELECTION side.

For each set (the study's 70/30 split, seed 0) a default model is trained on the 70 %; its
training rows' leave-one-out scores (Model.leave_one_out_scores: each row scored by the
model without it) are the fit's data, the 30 % judge. Families, each a grid fitted by least
leave-one-out log-loss, with or without the condition that its decisions (argmax) are right
on at least as many training rows as the score order's ("kept"):

  T    p ∝ exp(−s/(ρt))                       (follows the score order)
  TA   p ∝ π^a·exp(−s/(ρt)), a ∈ {0, 0.25, …, 1.5}
  TE   p = (1 − ε)·softmax(−s/(ρt)) + ε·π,  ε ∈ {0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3}

Usage: families.py --group selection|tables --out FILE.tsv   then   families.py --summary FILE.tsv
"""
import argparse
import csv
import os
import statistics
import sys

import numpy as np
from sklearn.model_selection import train_test_split

import flynn
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibration_study import datasets, ece, log_loss  # noqa: E402

TEMPS = [1e-3 * 10 ** (k / 16) for k in range(65)]
PRIOR_WEIGHTS = [0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5]
MIXES = [0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3]


def softmax_t(s, rho, t, log_prior=None, a=0.0):
    z = -(s - s.min(axis=1, keepdims=True)) / (rho * t)
    if log_prior is not None and a:
        z = z + a * log_prior[None, :]
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def candidates(family, s, rho, prior, loo_prior=None, y=None):
    """Yields (params, probabilities) over the family's grid; with loo_prior (n × L) the
    prior of each training row excludes the row itself."""
    for t in TEMPS:
        if family == "TA":
            for a in PRIOR_WEIGHTS:
                lp = np.log(loo_prior) if loo_prior is not None else np.log(prior)[None, :]
                z = -(s - s.min(axis=1, keepdims=True)) / (rho * t) + a * lp
                z -= z.max(axis=1, keepdims=True)
                p = np.exp(z)
                yield (t, a), p / p.sum(axis=1, keepdims=True)
        else:
            q = softmax_t(s, rho, t)
            for e in (MIXES if family == "TE" else [0]):
                pr = loo_prior if loo_prior is not None else prior[None, :]
                yield (t, e), (1 - e) * q + e * pr


def probs(family, params, s, rho, prior):
    t, x = params
    if family == "TA":
        return softmax_t(s, rho, t, np.log(prior), x)
    return (1 - x) * softmax_t(s, rho, t) + x * prior[None, :]


def fit(family, s, y, rho, n_l, kept):
    L = len(n_l)
    prior = (n_l + 1) / (n_l.sum() + L)
    # Leave-one-out priors: the row's own class counts one row fewer.
    counts = np.tile(n_l + 1, (len(y), 1)).astype(float)
    counts[np.arange(len(y)), y] -= 1
    loo_prior = counts / counts.sum(axis=1, keepdims=True)
    score_right = np.sum(s.argmin(axis=1) == y)
    best = None
    for params, p in candidates(family, s, rho, prior, loo_prior):
        loss = log_loss(p, y)
        right = np.sum(p.argmax(axis=1) == y)
        ok = (not kept) or right >= score_right or params[1] == 0
        if ok and (best is None or loss < best[0]):
            best = (loss, params)
    return best[1], prior


def measure(group, name, load):
    X, y_text = load()
    Xtr, Xte, ytr_t, yte_t = train_test_split(X, y_text, test_size=0.3, stratify=y_text, random_state=0)
    clf = flynn.FlyNNClassifier(n_jobs=2).fit(Xtr, ytr_t)
    classes = list(clf.classes_)
    ytr = np.array([classes.index(v) for v in ytr_t])
    keep = np.array([v in classes for v in yte_t])
    yte = np.array([classes.index(v) for v in yte_t[keep]])
    Xte = Xte[keep] if isinstance(Xte, np.ndarray) else Xte.loc[keep]
    rho = clf.config_["rho"]
    loo = clf._model.leave_one_out_scores(clf._check_X(Xtr), ytr.astype(np.uint32))
    ste = clf.scores(Xte)
    n_l = np.bincount(ytr, minlength=len(classes)).astype(float)
    freq = n_l / n_l.sum()
    out = {"group": group, "dataset": name, "n_train": len(ytr),
           "baseline": log_loss(np.tile(freq, (len(yte), 1)), yte),
           "acc_score": float(np.mean(ste.argmin(axis=1) == yte))}
    for family in ("T", "TA", "TE"):
        for kept in (False, True):
            if family == "T" and kept:
                continue
            params, prior = fit(family, loo, ytr, rho, n_l, kept)
            p = probs(family, params, ste, rho, prior)
            tag = family + ("_kept" if kept else "")
            out[f"{tag}_ll"] = log_loss(p, yte)
            out[f"{tag}_ece"] = ece(p, yte)
            out[f"{tag}_acc"] = float(np.mean(p.argmax(axis=1) == yte))
            out[f"{tag}_params"] = f"{params[0]:.4g}/{params[1]:g}"
    return out


def summary(path):
    with open(path) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    tags = [k[:-3] for k in rows[0] if k.endswith("_ll")]
    print("| family | median ECE | median log-loss | mean log-loss | below baseline | mean accuracy (score order) | "
          "sets losing > 0.005 accuracy |")
    print("|---|---|---|---|---|---|---|")
    for t in tags:
        below = sum(float(r[f"{t}_ll"]) < float(r["baseline"]) for r in rows)
        lose = sum(float(r[f"{t}_acc"]) < float(r["acc_score"]) - 0.005 for r in rows)
        print(f"| {t} | {statistics.median(float(r[f'{t}_ece']) for r in rows):.4f} | "
              f"{statistics.median(float(r[f'{t}_ll']) for r in rows):.4f} | "
              f"{statistics.mean(float(r[f'{t}_ll']) for r in rows):.4f} | {below}/{len(rows)} | "
              f"{statistics.mean(float(r[f'{t}_acc']) for r in rows):.4f} "
              f"({statistics.mean(float(r['acc_score']) for r in rows):.4f}) | {lose} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--group")
    ap.add_argument("--out")
    ap.add_argument("--summary")
    args = ap.parse_args()
    if args.summary:
        return summary(args.summary)
    done = set()
    if os.path.exists(args.out):
        with open(args.out) as f:
            done = {r["dataset"] for r in csv.DictReader(f, delimiter="\t")}
    for name, load in datasets(args.group, None):
        if name in done:
            continue
        try:
            row = measure(args.group, name, load)
        except Exception as e:
            print(f"{name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        new = not os.path.exists(args.out)
        with open(args.out, "a") as f:
            w = csv.DictWriter(f, list(row), delimiter="\t")
            if new:
                w.writeheader()
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
        print(name, flush=True)


if __name__ == "__main__":
    main()
