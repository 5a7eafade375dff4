#!/usr/bin/python3
"""Probabilities and the decision rule of flynn's default models, on held-out rows.

Each set is split once, stratified, 70 % / 30 % (seed 0). A model with no flags but
n_jobs is trained on the 70 % (FlyNNClassifier.fit: its calibration is fitted there, on
the training rows' leave-one-out scores) and judged on the 30 % it never saw:

  * accuracy and balanced accuracy of predict (the class of highest probability) and of
    the score rule (the class of lowest score, flynn's rule before probabilities decided);
  * log-loss and ECE (15 equal-width bins of the top probability) of predict_proba, and,
    with the accuracy of their argmax, of three other rules for choosing the candidate:
    least loss with the largest prior weight of the grid ("a1": w = 0.5), with prior weight
    0 (no priors: probabilities that follow the score order: "a0"), and over the whole grid
    without the accuracy condition ("free"); and of the old default (t = 0.054 with the
    class priors as factors, π·exp(−score/(ρt)), flynn before fitted calibrations);
  * the log-loss of always answering the training class frequencies (the baseline).

The other rules take their candidate from the same leave-one-out sums
(Model.calibration_loss), so only the rule differs.

Groups: --group selection|validation (the OpenML halves of research/common/heldout_split.tsv),
tables (../shared/data/tables, MANIFEST.tsv's label column), sklearn (iris, wine,
breast-cancer, digits).

Usage: calibration_study.py run --group G --out FILE.tsv [--only NAME,...] [--max-rows N]
       calibration_study.py summary FILE.tsv [FILE.tsv ...]
"""
import argparse
import csv
import os
import statistics
import sys
import time

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

import flynn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
SPLIT = os.path.join(ROOT, "research", "common", "heldout_split.tsv")
FLOOR = 1e-15
BINS = 15
OLD_T = 0.054

FIELDS = ["group", "dataset", "n_train", "n_test", "classes", "t", "a", "fit_rows", "train_seconds",
          "acc", "acc_score_rule", "bal_acc", "bal_acc_score_rule", "disagree",
          "log_loss", "ece", "log_loss_a1", "ece_a1", "acc_a1", "log_loss_a0", "ece_a0", "acc_a0",
          "log_loss_free", "ece_free", "acc_free", "a_free",
          "log_loss_old", "ece_old", "log_loss_baseline"]


def datasets(group, only):
    if group in ("selection", "validation"):
        with open(SPLIT) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                if r["half"] == group:
                    name = f"{r['did']}_{r['name']}"
                    yield name, lambda name=name: openml(name)
    elif group == "tables":
        with open(os.path.join(SHARED, "tables", "MANIFEST.tsv")) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                yield r["file"].split(".")[0], lambda r=r: table(r["file"], r["label"])
    elif group == "sklearn":
        from sklearn import datasets as sk
        for name, load in (("iris", sk.load_iris), ("wine", sk.load_wine),
                           ("breast_cancer", sk.load_breast_cancer), ("digits", sk.load_digits)):
            yield name, lambda load=load: load(return_X_y=True)
    else:
        sys.exit(f"unknown group {group}")


def openml(name):
    df = pd.read_csv(os.path.join(SHARED, "openml", name + ".csv.gz"))
    return df.iloc[:, :-1].to_numpy(np.float64), df.iloc[:, -1].astype(str).to_numpy()


def table(file, label):
    df = pd.read_csv(os.path.join(SHARED, "tables", file), keep_default_na=True)
    y = df[label].astype(str).to_numpy()
    X = df.drop(columns=[label])
    if file.startswith("cells"):
        X = X.drop(columns=["case"])
    return X, y


def probabilities(scores, rho, t, w, priors):
    """(1 − w)·softmax(−score/(ρt)) + w·π, as flynn::scores_to_probabilities."""
    z = -(scores - scores.min(axis=1, keepdims=True)) / (rho * t)
    q = np.exp(z)
    q /= q.sum(axis=1, keepdims=True)
    return (1 - w) * q + w * priors[None, :]


def log_loss(p, y):
    return float(np.mean(-np.log(np.maximum(p[np.arange(len(y)), y], FLOOR))))


def ece(p, y):
    top = p.argmax(axis=1)
    conf = p[np.arange(len(y)), top]
    b = np.clip(np.ceil(conf * BINS) - 1, 0, BINS - 1).astype(int)
    total = 0.0
    for k in range(BINS):
        sel = b == k
        if sel.any():
            total += abs(float(np.sum(top[sel] == y[sel])) - float(np.sum(conf[sel])))
    return total / len(y)


def balanced(pred, y, L):
    rec = [np.mean(pred[y == l] == l) for l in range(L) if np.any(y == l)]
    return float(np.mean(rec))


def measure(group, name, load, max_rows):
    X, y_text = load()
    if max_rows and len(y_text) > max_rows:
        X, _, y_text, _ = train_test_split(X, y_text, train_size=max_rows, stratify=y_text, random_state=0)
    Xtr, Xte, ytr_t, yte_t = train_test_split(X, y_text, test_size=0.3, stratify=y_text, random_state=0)
    clf = flynn.FlyNNClassifier(n_jobs=2)
    start = time.perf_counter()
    clf.fit(Xtr, ytr_t)
    seconds = time.perf_counter() - start
    classes = list(clf.classes_)
    ytr = np.array([classes.index(v) for v in ytr_t])
    keep = np.array([v in classes for v in yte_t])
    yte = np.array([classes.index(v) for v in yte_t[keep]])
    Xte = Xte[keep] if isinstance(Xte, np.ndarray) else Xte.loc[keep]
    L = len(classes)
    p = clf.predict_proba(Xte)
    pred = clf.predict(Xte)
    pred_ids = np.array([classes.index(v) for v in pred])
    assert np.array_equal(pred_ids, p.argmax(axis=1)), f"{name}: predict is not argmax(predict_proba)"
    scores = clf.scores(Xte)
    score_rule = scores.argmin(axis=1)
    cal = clf.calibration_
    rho = clf.config_["rho"]
    n_l = np.bincount(ytr, minlength=L).astype(float)
    priors = (n_l + 1) / (n_l.sum() + L)
    mine = probabilities(scores, rho, cal["temperature"], cal["prior_weight"], priors)
    assert np.allclose(mine, p, atol=1e-9), f"{name}: the study's probabilities differ from predict_proba"
    # The other rules, from the same leave-one-out sums over the training rows: per
    # candidate its loss and its right decisions, then the score order's right decisions.
    Xcore = clf._check_X(Xtr)
    totals, rows = clf._model.calibration_loss(Xcore, ytr.astype(np.uint32), len(ytr))
    grid = flynn._flynn.calibration_grid()
    G = len(grid)
    loss, right, score_right = totals[:G], totals[G:2 * G], totals[2 * G]
    pick = lambda ks: grid[min(ks, key=lambda k: (loss[k], k))]
    best = {"a1": pick([k for k in range(G) if grid[k][1] == 0.5]),
            "a0": pick([k for k in range(G) if grid[k][1] == 0.0]),
            "free": pick(range(G))}
    freq = n_l / n_l.sum()
    out = dict(group=group, dataset=name, n_train=len(ytr), n_test=len(yte), classes=L,
               t=cal["temperature"], a=cal["prior_weight"], fit_rows=cal["rows"], train_seconds=seconds,
               acc=float(np.mean(pred_ids == yte)), acc_score_rule=float(np.mean(score_rule == yte)),
               bal_acc=balanced(pred_ids, yte, L), bal_acc_score_rule=balanced(score_rule, yte, L),
               disagree=float(np.mean(pred_ids != score_rule)),
               log_loss=log_loss(p, yte), ece=ece(p, yte),
               log_loss_baseline=log_loss(np.tile(np.maximum(freq, FLOOR), (len(yte), 1)), yte))
    for tag in ("a1", "a0", "free"):
        q = probabilities(scores, rho, best[tag][0], best[tag][1], priors)
        out[f"log_loss_{tag}"] = log_loss(q, yte)
        out[f"ece_{tag}"] = ece(q, yte)
        out[f"acc_{tag}"] = float(np.mean(q.argmax(axis=1) == yte))
    out["a_free"] = best["free"][1]
    z = np.log(priors)[None, :] - (scores - scores.min(axis=1, keepdims=True)) / (rho * OLD_T)
    q = np.exp(z - z.max(axis=1, keepdims=True))
    q /= q.sum(axis=1, keepdims=True)
    out["log_loss_old"] = log_loss(q, yte)
    out["ece_old"] = ece(q, yte)
    return out


def run(args):
    done = set()
    if os.path.exists(args.out):
        with open(args.out) as f:
            done = {r["dataset"] for r in csv.DictReader(f, delimiter="\t")}
    only = set(args.only.split(",")) if args.only else None
    for name, load in datasets(args.group, only):
        if name in done or (only and name not in only):
            continue
        try:
            row = measure(args.group, name, load, args.max_rows)
        except Exception as e:  # a set the estimator refuses is reported, not fatal
            print(f"{name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        new = not os.path.exists(args.out)
        with open(args.out, "a") as f:
            w = csv.DictWriter(f, FIELDS, delimiter="\t")
            if new:
                w.writeheader()
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
        print(f"{name}: acc {row['acc']:.4f} (score rule {row['acc_score_rule']:.4f}), log-loss "
              f"{row['log_loss']:.4f} (baseline {row['log_loss_baseline']:.4f}), ECE {row['ece']:.4f}", flush=True)


def summary(args):
    rows = []
    for path in args.files:
        with open(path) as f:
            rows += list(csv.DictReader(f, delimiter="\t"))
    groups = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
    med = lambda rs, k: statistics.median(float(r[k]) for r in rs)
    mean = lambda rs, k: statistics.mean(float(r[k]) for r in rs)
    print("| group | sets | rule | median ECE | median log-loss | mean log-loss | log-loss below baseline | "
          "mean accuracy (score order: mean) | sets below the score order by > 0.005 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for g, rs in groups.items():
        for tag, name in (("", "default (least loss keeping accuracy)"), ("_free", "least loss"),
                          ("_a1", "prior weight 0.5"), ("_a0", "prior weight 0"), ("_old", "before (t = 0.054, priors as factors)")):
            ll, ece, acc = f"log_loss{tag}", f"ece{tag}", "acc" + (tag if tag != "_old" else "_a1")
            below = sum(float(r[ll]) < float(r["log_loss_baseline"]) for r in rs)
            acc_text = (f"{mean(rs, acc):.4f} ({mean(rs, 'acc_score_rule'):.4f})" if tag != "_old" else "–")
            worse = (sum(float(r[acc]) < float(r["acc_score_rule"]) - 0.005 for r in rs) if tag != "_old" else "–")
            print(f"| {g} | {len(rs)} | {name} | {med(rs, ece):.4f} | {med(rs, ll):.4f} | {mean(rs, ll):.4f} | "
                  f"{below}/{len(rs)} | {acc_text} | {worse} |")
    print()
    print("| group | dataset | n train | t | a | accuracy | score rule | ECE | log-loss | baseline |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['group']} | {r['dataset']} | {r['n_train']} | {float(r['t']):.3g} | {r['a']} | "
              f"{float(r['acc']):.4f} | {float(r['acc_score_rule']):.4f} | {float(r['ece']):.4f} | "
              f"{float(r['log_loss']):.4f} | {float(r['log_loss_baseline']):.4f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--group", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--only")
    r.add_argument("--max-rows", type=int, default=0)
    s = sub.add_parser("summary")
    s.add_argument("files", nargs="+")
    args = ap.parse_args()
    run(args) if args.cmd == "run" else summary(args)


if __name__ == "__main__":
    main()
