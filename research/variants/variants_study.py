#!/usr/bin/env python3
"""The variants/defaults study of issue 9 (research/defaults/history.md).

Protocol (fixed before results were looked at):
  * data: the 60 OpenML sets of MANIFEST.tsv, split by research/common/heldout_split.py into a
    selection half (variants and defaults are chosen on it only) and a validation half
    (only reported); scikit-learn's bundled iris, wine, breast-cancer and digits are a
    second validation group (`--half sklearn`, written as CSV files to OUT/sklearn/).
  * FlyNN: `flynn eval --folds K --json` (stratified folds, fold seed 0; standardising
    variants take their statistics from each fold's training rows).
  * tuned kNN: the better of (a) `flynn eval --knn` (exact kNN on L2-normalised rows, FAISS,
    k in {1,2,4,...,64} chosen on the same folds) and (b) scikit-learn StandardScaler (fit on
    each training fold) + KNeighborsClassifier with k in {1,2,4,...,64}, on
    StratifiedKFold(K, shuffle=True, random_state=0): the kNN a user would actually run.
  * gap = tuned kNN accuracy − FlyNN accuracy, in points.

Results go to OUT/results.jsonl (one line per (dataset, setting); resumable).

usage: variants_study.py FLYNN DATA_DIR OUT_DIR [--half selection|validation|sklearn]
                         [--settings a,b] [--folds 5] [--summary] [--markdown SETTING]
"""
import argparse
import csv
import gzip
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from heldout_split import split  # noqa: E402

# name -> extra `flynn eval` flags ("default" = this build's defaults, no flags).
SETTINGS = {
    "default": [],
    "paper-defaults": ["--variant", "paper"],
    "zsign": ["--variant", "zsign"],
    "z": ["--variant", "z"],
    "zsign-q": ["--variant", "zsign-q"],
    "thermo": ["--variant", "thermo"],
    "thermo-sign": ["--variant", "thermo-sign"],
    "zsign_s3": ["--variant", "zsign", "--s", "3"],
    "zsign_s0.1": ["--variant", "zsign", "--connection-sparsity", "0.1"],
    "thermo_s3": ["--variant", "thermo", "--s", "3"],
    "thermo_s8": ["--variant", "thermo", "--s", "8"],
    "thermo-sign_s8": ["--variant", "thermo-sign", "--s", "8"],
    "zsign_r32": ["--variant", "zsign", "--rho", "32"],
    "zsign_g0.5": ["--variant", "zsign", "--gamma", "0.5"],
    "zsign_g0.9": ["--variant", "zsign", "--gamma", "0.9"],
    "thermo_s8_g0.5": ["--variant", "thermo", "--s", "8", "--gamma", "0.5"],
    "thermo_s8_r32": ["--variant", "thermo", "--s", "8", "--rho", "32"],
    "thermo_s8_m4x": ["--variant", "thermo", "--s", "8", "--m", "{M4X}"],
    "zsign_m4x": ["--variant", "zsign", "--m", "{M4X}"],
    "zsign-q_s0.1": ["--variant", "zsign-q", "--connection-sparsity", "0.1"],
    "zsign-q_g0.5": ["--variant", "zsign-q", "--gamma", "0.5"],
    "zsign-q_r32": ["--variant", "zsign-q", "--rho", "32"],
}

K_GRID = [1, 2, 4, 8, 16, 32, 64]


def openml_sets(data_dir, half):
    names = {did: (name, h) for did, name, h in split(os.path.join(data_dir, "MANIFEST.tsv"))}
    out = []
    for did, (name, h) in sorted(names.items(), key=lambda x: int(x[0])):
        if h == half:
            out.append((f"{did}_{name}", os.path.join(data_dir, f"{did}_{name}.csv.gz")))
    return out


def sklearn_sets(out_dir):
    """Writes iris, wine, breast-cancer, digits as label-last CSV files."""
    from sklearn import datasets
    os.makedirs(os.path.join(out_dir, "sklearn"), exist_ok=True)
    out = []
    for name, loader in [("iris", datasets.load_iris), ("wine", datasets.load_wine),
                         ("breast-cancer", datasets.load_breast_cancer), ("digits", datasets.load_digits)]:
        path = os.path.join(out_dir, "sklearn", f"{name}.csv")
        if not os.path.exists(path):
            b = loader()
            with open(path, "w") as f:
                w = csv.writer(f)
                w.writerow([f"f{j}" for j in range(b.data.shape[1])] + ["label"])
                for x, y in zip(b.data, b.target):
                    w.writerow([repr(float(v)) for v in x] + [f"c{y}"])
        out.append((name, path))
    return out


def load_xy(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = list(csv.reader(f))
    body = rows[1:] if any(c and not _is_number(c) for c in rows[0][:-1]) else rows
    X = np.array([[float(v) if v not in ("", "?") else np.nan for v in r[:-1]] for r in body])
    col_mean = np.nanmean(X, axis=0)
    X = np.where(np.isnan(X), np.nan_to_num(col_mean), X)
    _, y = np.unique([r[-1] for r in body], return_inverse=True)
    return X, y


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def standardized_knn(path, folds):
    """Accuracy of StandardScaler + kNN with k tuned on the folds (best mean over K_GRID)."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.neighbors import NearestNeighbors
    from sklearn.preprocessing import StandardScaler
    X, y = load_xy(path)
    L = y.max() + 1
    correct = np.zeros(len(K_GRID))
    skf = StratifiedKFold(folds, shuffle=True, random_state=0)
    for tr, te in skf.split(X, y):
        sc = StandardScaler().fit(X[tr])
        kmax = min(max(K_GRID), len(tr))
        nn = NearestNeighbors(n_neighbors=kmax).fit(sc.transform(X[tr]))
        idx = nn.kneighbors(sc.transform(X[te]), return_distance=False)
        labels = y[tr][idx]
        for i, k in enumerate(K_GRID):
            kk = min(k, kmax)
            votes = np.zeros((len(te), L))
            for j in range(kk):
                votes[np.arange(len(te)), labels[:, j]] += 1
            correct[i] += (votes.argmax(axis=1) == y[te]).sum()
    acc = correct / len(y)
    return float(acc.max()), K_GRID[int(acc.argmax())]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def expand(flags, d):
    return [f.replace("{M4X}", str(4 * min(max(256 * d, 4096), 131072))) for f in flags]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("flynn")
    ap.add_argument("data_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--half", default="selection", choices=["selection", "validation", "sklearn"])
    ap.add_argument("--settings", default="default")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--threads", default="2")
    ap.add_argument("--summary", action="store_true", help="print the summary and exit")
    ap.add_argument("--markdown", metavar="SETTING", default="")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    out = os.path.join(a.out_dir, "results.jsonl")
    done = {}
    if os.path.exists(out):
        for line in open(out):
            j = json.loads(line)
            done[(j["dataset"], j["setting"])] = j
    sets = sklearn_sets(a.out_dir) if a.half == "sklearn" else openml_sets(a.data_dir, a.half)
    settings = a.settings.split(",")
    if a.markdown:
        return markdown(done, sets, a.markdown)
    if not a.summary:
        for name, path in sets:
            for setting in ["knn"] + settings:
                if (name, setting) in done:
                    continue
                base = [a.flynn, "eval", "--data", path, "--json", "--quiet", "--threads", a.threads,
                        "--folds", str(a.folds)]
                try:
                    if setting == "knn":
                        j = run(base + ["--knn", "--m", "4", "--s", "1", "--rho", "1", "--variant", "paper"])
                        z_acc, z_k = standardized_knn(path, a.folds)
                        rec = {"dataset": name, "setting": "knn", "l2_accuracy": j["knn"]["accuracy_mean"],
                               "l2_k": j["knn"]["best_k"], "z_accuracy": z_acc, "z_k": z_k,
                               "accuracy": max(j["knn"]["accuracy_mean"], z_acc), "d": j["features"]}
                    else:
                        d = done[(name, "knn")]["d"]
                        j = run(base + expand(SETTINGS[setting], d))
                        rec = {"dataset": name, "setting": setting, "accuracy": j["accuracy_mean"],
                               "seconds": j["seconds"], "config": j["config"]}
                except (RuntimeError, KeyError) as e:
                    rec = {"dataset": name, "setting": setting, "error": str(e)}
                done[(name, setting)] = rec
                with open(out, "a") as f:
                    f.write(json.dumps(rec) + "\n")
                print(json.dumps(rec), flush=True)
    summarize(done, sets, settings)


def gaps_of(done, sets, setting):
    gaps = []
    for name, _ in sets:
        k, r = done.get((name, "knn")), done.get((name, setting))
        if k and r and "accuracy" in k and "accuracy" in r:
            gaps.append((100 * (k["accuracy"] - r["accuracy"]), name))
    return gaps


def summarize(done, sets, settings):
    print(f"\n{'setting':<20} {'n':>3} {'median':>7} {'mean':>6} {'worst':>6} {'>15':>4} {'ahead':>5} {'secs':>7}  worst set")
    for s in settings:
        g = gaps_of(done, sets, s)
        if not g:
            continue
        vals = [x for x, _ in g]
        secs = sum(done[(n, s)].get("seconds", 0) for _, n in g)
        worst = max(g)
        print(f"{s:<20} {len(g):>3} {statistics.median(vals):>7.2f} {statistics.mean(vals):>6.2f} "
              f"{worst[0]:>6.1f} {sum(v > 15 for v in vals):>4} {sum(v < 0 for v in vals):>5} {secs:>7.1f}  {worst[1]}")


def markdown(done, sets, setting):
    print(f"| dataset | d | kNN L2 (k) | kNN std (k) | FlyNN `{setting}` | gap (points) |")
    print("|---|---|---|---|---|---|")
    vals = []
    for name, _ in sets:
        k, r = done.get((name, "knn")), done.get((name, setting))
        if not k or not r or "accuracy" not in r:
            continue
        gap = 100 * (k["accuracy"] - r["accuracy"])
        vals.append(gap)
        print(f"| {name} | {k['d']} | {k['l2_accuracy']:.3f} ({k['l2_k']}) | {k['z_accuracy']:.3f} ({k['z_k']}) "
              f"| {r['accuracy']:.3f} | {gap:+.1f} |")
    if vals:
        print(f"\n{len(vals)} sets: median gap {statistics.median(vals):.2f} points, mean {statistics.mean(vals):.2f}, "
              f"worst {max(vals):.1f}; more than 15 behind on {sum(v > 15 for v in vals)}, "
              f"FlyNN ahead on {sum(v < 0 for v in vals)}.")


if __name__ == "__main__":
    sys.exit(main())
