#!/usr/bin/python3
"""Probe for an --auto mode (issue 20): what does a small built-in search give on rows it never saw?

Nothing is chosen here. For each set of the given validation groups (research/defaults/shapes_study.py's
groups and data; run it once with those groups to build the files), the file is split once,
stratified, 70 % / 30 % (seed 0, tune_metric_study.split_file), and three models are scored on
the 30 %:
  default  `flynn train` with no flags on the 70 %;
  tuned    `flynn tune --budget B --folds 3` on the 70 % (its saved model);
  kNN      exact kNN (scikit-learn) tuned by 3-fold CV on the 70 % over k in {1,2,4,...,64}
           x {L2-normalised rows, standardised features} (text columns one-hot, NA imputed
           by the training mean), then fitted on the 70 %.
Prints one TSV line per set (name, rows, default, tuned, kNN, tune seconds, tuned variant), then
with --summary FILE per-group medians and worst of kNN − FlyNN in points.

Usage: research/auto/auto_mode_probe.py run OUT_DIR --groups mlbench,lowd-val,sklearn [--budget 10] > R.tsv
       research/auto/auto_mode_probe.py summary R.tsv
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from shapes_study import group_sets  # noqa: E402
from tune_metric_study import split_file  # noqa: E402


def knn_accuracy(train, test):
    import pandas as pd
    from sklearn.impute import SimpleImputer
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer, StandardScaler

    def read(path):
        first = open(path).readline().split(",")[0]
        try:
            float(first)
            header = None
        except ValueError:
            header = 0
        return pd.read_csv(path, header=header, na_values=["NA", "?", ""])

    a, b = read(train), read(test)
    b.columns = a.columns
    both = pd.concat([a, b])
    X = pd.get_dummies(both.iloc[:, :-1]).astype(float).to_numpy()
    y = both.iloc[:, -1].astype(str).to_numpy()
    Xtr, ytr, Xte, yte = X[:len(a)], y[:len(a)], X[len(a):], y[len(a):]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    best, best_model = -1.0, None
    for prep in (Normalizer(), StandardScaler()):
        for k in (1, 2, 4, 8, 16, 32, 64):
            if k > len(ytr) * 2 // 3:
                continue
            model = make_pipeline(SimpleImputer(), prep, KNeighborsClassifier(k))
            score = cross_val_score(model, Xtr, ytr, cv=cv).mean()
            if score > best:
                best, best_model = score, model
    best_model.fit(Xtr, ytr)
    return float((best_model.predict(Xte) == yte).mean())


def flynn(binary, args):
    out = subprocess.run([binary] + args + ["--json", "-q"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def run(a):
    for group in a.groups.split(","):
        for name, path, _ in group_sets(group, a.out_dir):
            with tempfile.TemporaryDirectory() as d:
                (train, test), n = split_file(path, d)
                model = os.path.join(d, "m.flynn")
                default = flynn(a.flynn, ["train", "--data", train, "--test", test, "--model", model])
                tuned = flynn(a.flynn, ["tune", "--data", train, "--test", test, "--model", model,
                                        "--budget", str(a.budget), "--folds", "3"])
                print(f"{group}\t{name}\t{n}\t{default['test']['accuracy']:.4f}\t{tuned['test']['accuracy']:.4f}"
                      f"\t{knn_accuracy(train, test):.4f}\t{tuned.get('seconds', 0):.1f}"
                      f"\t{tuned['config'].get('variant', 'paper')}", flush=True)


def summary(path):
    groups = {}
    for line in open(path).read().split("\n"):
        if line.strip():
            f = line.split("\t")
            groups.setdefault(f[0], []).append([float(v) for v in f[3:6]])
    print("| group | sets | kNN − default: median / worst | kNN − tuned: median / worst | tuned better / worse than default |")
    print("|---|---|---|---|---|")
    for g, rows in groups.items():
        d = [100 * (k - x) for x, _, k in rows]
        t = [100 * (k - y) for _, y, k in rows]
        print(f"| {g} | {len(rows)} | {statistics.median(d):.2f} / {max(d):.1f} | {statistics.median(t):.2f} / {max(t):.1f} "
              f"| {sum(y > x for x, y, _ in rows)} / {sum(y < x for x, y, _ in rows)} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out_dir")
    r.add_argument("--groups", default="mlbench,lowd-val,sklearn,binary-val,onehot-val")
    r.add_argument("--budget", type=int, default=10)
    r.add_argument("--flynn", default="build/flynn")
    s = sub.add_parser("summary")
    s.add_argument("tsv")
    a = p.parse_args()
    run(a) if a.cmd == "run" else summary(a.tsv)


if __name__ == "__main__":
    main()
