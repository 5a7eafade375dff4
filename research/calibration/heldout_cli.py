#!/usr/bin/python3
"""Default models' probabilities and decisions on held-out rows, through the CLI.

Each table is split once, stratified, 70 % / 30 % (seed 0). `flynn train` with no flags
trains on the 70 % (its calibration is fitted there, on the training rows' leave-one-out
scores); `flynn predict --proba` labels the 30 % it never saw. Per table:

  * rows where the predicted class is not the first class of highest probability
    (must be 0: one decision rule);
  * accuracy; log-loss and ECE (15 equal-width bins of the top probability);
  * the log-loss of always answering the training class frequencies (the baseline);
  * the calibration `flynn info` reports, and the training time `flynn train` reports.

Groups: validation (the OpenML validation half of research/common/heldout_split.tsv, on
which nothing of the calibration was chosen), tables (../shared/data/tables, the label
column of its MANIFEST.tsv).

Usage: heldout_cli.py --flynn BUILD/flynn --group validation|tables --out FILE.tsv
       [--max-rows N] [--only NAME,...]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
SPLIT = os.path.join(ROOT, "research", "common", "heldout_split.tsv")
FLOOR = 1e-15
BINS = 15
FIELDS = ["group", "dataset", "n_train", "n_test", "classes", "disagree", "acc", "log_loss", "baseline_log_loss",
          "ece", "train_seconds", "calibration"]


def tables(group, only):
    out = []
    if group == "validation":
        with open(SPLIT) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                if row["half"] != "validation":
                    continue
                path = os.path.join(SHARED, "openml", f"{row['did']}_{row['name']}.csv.gz")
                out.append((row["name"], path, None))
    else:
        with open(os.path.join(SHARED, "tables", "MANIFEST.tsv")) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                out.append((row["file"].split(".")[0], os.path.join(SHARED, "tables", row["file"]), row["label"]))
    return [t for t in out if not only or t[0] in only]


def ece(p, y):
    top = p.max(axis=1)
    right = (p.argmax(axis=1) == y).astype(float)
    bins = np.minimum((top * BINS).astype(int), BINS - 1)
    total = 0.0
    for b in range(BINS):
        m = bins == b
        if m.any():
            total += m.sum() * abs(top[m].mean() - right[m].mean())
    return total / len(y)


def run_one(flynn, group, name, path, label, max_rows, work):
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    label = label or df.columns[-1]
    if max_rows and len(df) > max_rows:
        df, _ = train_test_split(df, train_size=max_rows, stratify=df[label], random_state=0)
    counts = df[label].value_counts()
    df = df[df[label].isin(counts[counts >= 2].index)]  # a stratified split needs 2 rows per class
    train, test = train_test_split(df, test_size=0.3, stratify=df[label], random_state=0)
    tr, te, model, pred = (os.path.join(work, f) for f in ("train.csv", "test.csv", "m.flynn", "pred.csv"))
    train.to_csv(tr, index=False)
    test.to_csv(te, index=False)
    t0 = time.time()
    out = subprocess.run([flynn, "train", "--data", tr, "--model", model, "--label-col", label, "--json", "-q"],
                         check=True, capture_output=True, text=True)
    wall = time.time() - t0
    j = json.loads(out.stdout)
    info = subprocess.run([flynn, "info", "--model", model, "--json"], check=True, capture_output=True, text=True)
    calibration = json.loads(info.stdout).get("calibration", {})
    subprocess.run([flynn, "predict", "--model", model, "--data", te, "--label-col", label, "--proba", "--out", pred,
                    "-q"], check=True, capture_output=True, text=True)
    p = pd.read_csv(pred, dtype={"prediction": str}, keep_default_na=False)
    prob_cols = [c for c in p.columns if c.startswith("p_")]
    classes = [c[2:] for c in prob_cols]
    P = p[prob_cols].to_numpy(dtype=float)
    y_names = test[label].astype(str).to_numpy()
    index = {c: i for i, c in enumerate(classes)}
    y = np.array([index[v] for v in y_names])
    predicted = np.array([index[v] for v in p["prediction"].astype(str)])
    disagree = int((predicted != P.argmax(axis=1)).sum())
    ll = float(-np.mean(np.log(np.maximum(P[np.arange(len(y)), y], FLOOR))))
    freq = train[label].astype(str).value_counts()
    prior = np.array([freq.get(c, 0) for c in classes], dtype=float) / len(train)
    base = float(-np.mean(np.log(np.maximum(prior[y], FLOOR))))
    return {"group": group, "dataset": name, "n_train": len(train), "n_test": len(test), "classes": len(classes),
            "disagree": disagree, "acc": round(float((predicted == y).mean()), 4), "log_loss": round(ll, 4),
            "baseline_log_loss": round(base, 4), "ece": round(float(ece(P, y)), 4),
            "train_seconds": j.get("train_seconds", round(wall, 3)), "calibration": json.dumps(calibration)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flynn", required=True)
    ap.add_argument("--group", required=True, choices=["validation", "tables"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-rows", type=int, default=0)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else set()
    rows = []
    with tempfile.TemporaryDirectory() as work, open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, delimiter="\t")
        w.writeheader()
        for name, path, label in tables(a.group, only):
            try:
                r = run_one(a.flynn, a.group, name, path, label, a.max_rows, work)
            except subprocess.CalledProcessError as e:
                print(f"{name}: {e.stderr.strip()}", file=sys.stderr)
                continue
            rows.append(r)
            w.writerow(r)
            f.flush()
            print(name, r["acc"], r["log_loss"], r["baseline_log_loss"], r["ece"], r["disagree"], file=sys.stderr)
    if rows:
        print(f"{len(rows)} tables: median ECE {statistics.median(r['ece'] for r in rows):.4f}; log-loss below the "
              f"class-frequency baseline on {sum(r['log_loss'] < r['baseline_log_loss'] for r in rows)}; rows where "
              f"predict != argmax predict_proba: {sum(r['disagree'] for r in rows)} of "
              f"{sum(r['n_test'] for r in rows)}")


if __name__ == "__main__":
    main()
