#!/usr/bin/python3
"""Fourteenth round of issue 20 (research/defaults/history.md): does compressing the values of
non-negative columns (x ↦ log(1 + x), x^¼, √x) before FlyNN sees them close the
Fashion-MNIST gap, and could it be a default rule?

The transform is applied to the rows handed to the Python package; FlyNN itself is
unchanged (its defaults, or `variant="zsign-q"`), so every mode measures what a rule or an
encoding of this kind would give before anything is built.

Modes (each appends JSON lines to OUT):
  --fashion-split  Fashion-MNIST training rows 0–49999 train, 50000–59999 query (selection
                   data): FlyNN under each transform, and exact kNN (cosine, k = 1/5/10) on
                   the same encodings, raw and standardised. About 8 minutes.
  --fashion-test   held out: the settings fixed on the split, trained on the 60000 training
                   rows and scored once on the test set (FlyNN and kNN). About 3 minutes.
  --openml-sel     the OpenML selection half (research/common/heldout_split.py), 5-fold stratified
                   CV (seed 0): the defaults against each transform applied to every column
                   whose training minimum is ≥ 0. About 5 minutes.
  --tables         the imbalanced shared tables of research/imbalanced/imbalanced_study.py:
                   `flynn eval --class-weight balanced` (5 folds) on the table and on copies
                   whose numeric non-negative columns with more than two values are
                   transformed. Needs build/flynn. About 3 minutes.
  --summary        prints the tables of research/defaults/history.md from OUT.

usage: research/value_transform/value_encoding_probe.py OUT.jsonl MODE [--only SETTING,…]
Needs the Python package (pip install .), numpy, pandas and scikit-learn.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from fashion_data import N_SPLIT, fashion_rows  # noqa: E402
from heldout_split import split  # noqa: E402

SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "data"))
FLYNN_CLI = os.path.join(HERE, "..", "..", "build", "flynn")

TRANSFORMS = {
    "none": lambda A: A,
    "sqrt": np.sqrt,
    "p25": lambda A: A ** 0.25,
    "log1p": np.log1p,
}
# (setting, transform, FlyNN keywords): the split's grid; the test scores the starred few.
FASHION_SETTINGS = [
    ("default", "none", {}), ("zsign-q", "none", {"variant": "zsign-q"}),
    ("default+sqrt", "sqrt", {}), ("default+p25", "p25", {}), ("default+log1p", "log1p", {}),
    ("zsign-q+sqrt", "sqrt", {"variant": "zsign-q"}), ("zsign-q+p25", "p25", {"variant": "zsign-q"}),
    ("zsign-q+log1p", "log1p", {"variant": "zsign-q"}),
    # with the second-order filters at the cheaper hash (twelfth round: s = 32 predicts as
    # fast as the defaults)
    ("zsign-q+log1p+pairs4+s32", "log1p", {"variant": "zsign-q", "pairs": 4, "s": 32}),
]
FASHION_TEST = ["default", "zsign-q", "zsign-q+p25", "zsign-q+log1p", "zsign-q+log1p+pairs4+s32"]


def append(out, rec):
    with open(out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)


def flynn_accuracy(Xtr, ytr, Xq, yq, kw):
    import flynn
    clf = flynn.FlyNNClassifier(n_jobs=2, **kw).fit(Xtr, ytr)
    return float(np.mean(clf.predict(Xq) == yq))


def knn_accuracies(Xtr, ytr, Xq, yq, ks=(1, 5, 10)):
    """Exact kNN by cosine similarity (L2-normalised rows), majority vote."""
    def unit(A):
        return A / np.maximum(np.linalg.norm(A, axis=1, keepdims=True), 1e-12)
    A, B = unit(Xtr), unit(Xq)
    kmax = max(ks)
    right = dict.fromkeys(ks, 0)
    for i in range(0, len(B), 1000):
        S = B[i:i + 1000] @ A.T
        idx = np.argpartition(-S, kmax, axis=1)[:, :kmax]
        idx = np.take_along_axis(idx, np.argsort(-np.take_along_axis(S, idx, 1), axis=1), 1)
        for k in ks:
            votes = ytr[idx[:, :k]]
            pred = np.array([np.bincount(v, minlength=ytr.max() + 1).argmax() for v in votes])
            right[k] += int(np.sum(pred == yq[i:i + 1000]))
    return {str(k): right[k] / len(B) for k in ks}


def standardised(Xtr, Xq):
    mu, sd = Xtr.mean(axis=0), Xtr.std(axis=0)
    sd[sd == 0] = 1
    return (Xtr - mu) / sd, (Xq - mu) / sd


def fashion(out, test, only=None):
    X, y = fashion_rows("train")
    X = X.astype(np.float32)
    if test:
        Xq, yq = fashion_rows("t10k")
        Xtr, ytr, Xq, protocol = X, y, Xq.astype(np.float32), "train 60000 / test 10000 (held out)"
    else:
        Xtr, ytr, Xq, yq, protocol = X[:N_SPLIT], y[:N_SPLIT], X[N_SPLIT:], y[N_SPLIT:], "split 0-49999 / 50000-59999"
    for setting, t, kw in FASHION_SETTINGS:
        if (test and setting not in FASHION_TEST) or (only and setting not in only):
            continue
        f = TRANSFORMS[t]
        append(out, {"mode": "fashion", "protocol": protocol, "setting": setting, "transform": t, "flynn": kw,
                     "accuracy": flynn_accuracy(f(Xtr), ytr, f(Xq), yq, kw)})
    for t in [] if only else (["none", "log1p"] if test else ["none", "sqrt", "p25", "log1p"]):
        f = TRANSFORMS[t]
        A, B = f(Xtr), f(Xq)
        append(out, {"mode": "fashion-knn", "protocol": protocol, "transform": t, "rows": "raw",
                     "accuracy": knn_accuracies(A, ytr, B, yq)})
        A, B = standardised(A, B)
        append(out, {"mode": "fashion-knn", "protocol": protocol, "transform": t, "rows": "standardised",
                     "accuracy": knn_accuracies(A, ytr, B, yq)})


def nonneg_transform(t, Xtr, Xq):
    """The transform on every column whose training minimum is ≥ 0 (others unchanged)."""
    cols = Xtr.min(axis=0) >= 0
    f = TRANSFORMS[t]
    A, B = Xtr.copy(), Xq.copy()
    A[:, cols] = f(A[:, cols])
    B[:, cols] = f(np.clip(B[:, cols], 0, None))
    return A, B


def openml_sel(out):
    import pandas as pd
    from sklearn.model_selection import StratifiedKFold
    data_dir = os.path.join(SHARED, "openml")
    for did, name, half in sorted(split(os.path.join(data_dir, "MANIFEST.tsv")), key=lambda r: int(r[0])):
        if half != "selection":
            continue
        df = pd.read_csv(os.path.join(data_dir, f"{did}_{name}.csv.gz"))
        y = df.iloc[:, -1].astype(str).to_numpy()
        X = df.iloc[:, :-1].apply(pd.to_numeric, errors="coerce").fillna(0).to_numpy(np.float64)
        rec = {"mode": "openml-sel", "set": f"{did}_{name}", "d": X.shape[1],
               "nonneg_columns": int(np.sum(X.min(axis=0) >= 0)), "zero_share": float(np.mean(X == 0))}
        for t in ["none", "sqrt", "p25", "log1p"]:
            right = 0.0
            for tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
                A, B = nonneg_transform(t, X[tr], X[te])
                right += flynn_accuracy(A, y[tr], B, y[te], {}) * len(te)
            rec[t] = round(right) / len(y)
        append(out, rec)


def tables(out):
    import pandas as pd
    from imbalanced_study import MAX_MINORITY_TO_MAJORITY, class_shares
    from imbalanced_study import tables as table_list

    def balanced_accuracy(path, label):
        p = subprocess.run([FLYNN_CLI, "eval", "--data", path, "--label-col", label, "--folds", "5",
                            "--class-weight", "balanced", "--threads", "2", "--quiet", "--json"],
                           capture_output=True, text=True, check=True)
        return json.loads(p.stdout)["balanced_accuracy"]

    with tempfile.TemporaryDirectory() as tmp:
        for name, path, label in table_list():
            shares, _ = class_shares(path, label)
            if min(shares.values()) > MAX_MINORITY_TO_MAJORITY * max(shares.values()):
                continue
            df = pd.read_csv(path)
            rec = {"mode": "tables", "set": name, "none": balanced_accuracy(path, label)}
            for t in ["p25", "log1p"]:
                copy = df.copy()
                changed = 0
                for c in copy.columns:
                    v = copy[c]
                    if c != label and pd.api.types.is_numeric_dtype(v) and v.min() >= 0 and v.nunique() > 2:
                        copy[c] = TRANSFORMS[t](v.astype(np.float64))
                        changed += 1
                moved = os.path.join(tmp, f"{name}_{t}.csv.gz")
                copy.to_csv(moved, index=False)
                rec[t], rec[f"columns_{t}"] = balanced_accuracy(moved, label), changed
            append(out, rec)


def summary(out):
    recs = [json.loads(line) for line in open(out) if line.strip()]
    for protocol in sorted({r["protocol"] for r in recs if r["mode"] == "fashion"}):
        print(f"\nFashion-MNIST, {protocol}")
        for r in recs:
            if r.get("protocol") == protocol and r["mode"] == "fashion":
                print(f"  FlyNN {r['setting']:16s} {r['accuracy']:.4f}")
            if r.get("protocol") == protocol and r["mode"] == "fashion-knn":
                acc = " / ".join(f"{v:.4f}" for v in r["accuracy"].values())
                print(f"  kNN {r['transform']:6s} {r['rows']:12s} k=1/5/10 {acc}")
    sel = [r for r in recs if r["mode"] == "openml-sel"]
    if sel:
        print(f"\nOpenML selection half ({len(sel)} sets), transform − none, points")
        for t in ["sqrt", "p25", "log1p"]:
            diffs = [100 * (r[t] - r["none"]) for r in sel if r["nonneg_columns"]]
            print(f"  {t}: sets with a non-negative column {len(diffs)}, median {statistics.median(diffs):+.2f}, "
                  f"mean {statistics.mean(diffs):+.2f}, better/worse {sum(x > 0 for x in diffs)}/"
                  f"{sum(x < 0 for x in diffs)}, worst {min(diffs):+.2f}, best {max(diffs):+.2f}")
        for r in sel:
            if r["nonneg_columns"]:
                print(f"    {r['set']:40s} none {r['none']:.4f}  " +
                      "  ".join(f"{t} {100 * (r[t] - r['none']):+.2f}" for t in ["sqrt", "p25", "log1p"]))
    tab = [r for r in recs if r["mode"] == "tables"]
    if tab:
        print(f"\nImbalanced tables ({len(tab)}), balanced accuracy with --class-weight balanced")
        for r in tab:
            print(f"    {r['set']:16s} none {r['none']:.3f}  p25 {r['p25']:.3f}  log1p {r['log1p']:.3f}")
        for t in ["p25", "log1p"]:
            diffs = [100 * (r[t] - r["none"]) for r in tab]
            print(f"  {t}: median {statistics.median(diffs):+.2f}, better/worse {sum(x > 0 for x in diffs)}/"
                  f"{sum(x < 0 for x in diffs)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    mode = ap.add_mutually_exclusive_group(required=True)
    for m in ["--fashion-split", "--fashion-test", "--openml-sel", "--tables", "--summary"]:
        mode.add_argument(m, action="store_true")
    ap.add_argument("--only", help="Fashion-MNIST modes: these settings (comma-separated) and no kNN")
    a = ap.parse_args()
    if a.fashion_split or a.fashion_test:
        fashion(a.out, a.fashion_test, a.only.split(",") if a.only else None)
    elif a.openml_sel:
        openml_sel(a.out)
    elif a.tables:
        tables(a.out)
    else:
        summary(a.out)


if __name__ == "__main__":
    main()
