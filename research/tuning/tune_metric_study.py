#!/usr/bin/python3
"""Held-out study of `flynn tune --metric log_loss` against `--metric accuracy` (docs/guide/reproduce.md,
"Tuning for probabilities").

Nothing is chosen here: the metric is the user's choice. The question is whether searching by
the out-of-fold log-loss of the calibrated probabilities gives better probabilities on rows
the search never saw. Each set of the VALIDATION half of ../shared/data/openml (the held-out
rule of research/common/heldout_split.py) and, with --sklearn, scikit-learn's bundled sets is split
once, stratified, 70 % / 30 % (seed 0); `flynn tune` runs on the 70 % with each metric
(same budget, folds and seeds) and its saved model is judged on the 30 % (`--test`):
log-loss, ECE and accuracy.

Usage: research/tuning/tune_metric_study.py run|summary --out FILE.tsv [--budget 20] [--folds 5]
       [--flynn build/flynn] [--sklearn] [--max-rows 6000] [--only NAME,...] [--threads 2]
"""
import argparse
import csv
import gzip
import os
import random
import statistics
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from tune_study import ROOT, append, halves, pending, run, sklearn_sets  # noqa: E402

METRICS = ("accuracy", "log_loss")


def split_file(path, out_dir, seed=0, test_fraction=0.3):
    """Writes train.csv and test.csv (the file's header, if any, on both): within each label
    (the last field) the rows are shuffled and the first ⌈0.3·n_l⌉ go to the test file."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        lines = [ln for ln in f.read().splitlines() if ln.strip()]
    header = []
    try:
        float(lines[0].split(",")[0])
    except ValueError:
        header = [lines.pop(0)]
    by_label = {}
    for ln in lines:
        by_label.setdefault(ln.rsplit(",", 1)[-1], []).append(ln)
    rng = random.Random(seed)
    train, test = [], []
    for label in sorted(by_label):
        rows = by_label[label]
        rng.shuffle(rows)
        cut = -(-len(rows) * 3 // 10) if len(rows) > 1 else 0
        test += rows[:cut]
        train += rows[cut:]
    paths = []
    for name, rows in (("train.csv", train), ("test.csv", test)):
        p = os.path.join(out_dir, name)
        with open(p, "w") as f:
            f.write("\n".join(header + rows) + "\n")
        paths.append(p)
    return paths, len(lines)


def summary(out):
    with open(out) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    print("| dataset | rows | test log-loss (by accuracy) | test log-loss (by log-loss) | accuracy (by accuracy) "
          "| accuracy (by log-loss) | ECE (by accuracy) | ECE (by log-loss) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dataset']} | {r['rows']} | {float(r['accuracy_log_loss']):.4f} | {float(r['log_loss_log_loss']):.4f} "
              f"| {float(r['accuracy_accuracy']):.4f} | {float(r['log_loss_accuracy']):.4f} "
              f"| {float(r['accuracy_ece']):.4f} | {float(r['log_loss_ece']):.4f} |")
    diff = [float(r["log_loss_log_loss"]) - float(r["accuracy_log_loss"]) for r in rows]
    lower = sum(x < 0 for x in diff)
    higher = sum(x > 0 for x in diff)
    acc_diff = [float(r["log_loss_accuracy"]) - float(r["accuracy_accuracy"]) for r in rows]
    print(f"\n{len(rows)} sets: test log-loss searched by log-loss − by accuracy: median {statistics.median(diff):+.4f}, "
          f"mean {statistics.mean(diff):+.4f} (lower on {lower}, higher on {higher}, equal on "
          f"{len(rows) - lower - higher}); median test log-loss "
          f"{statistics.median(float(r['log_loss_log_loss']) for r in rows):.4f} vs "
          f"{statistics.median(float(r['accuracy_log_loss']) for r in rows):.4f}; accuracy change median "
          f"{statistics.median(acc_diff):+.4f}, worst {min(acc_diff):+.4f}")


def split_study(summary_fn, run_set, description, extra=None):
    """The command line of a held-out tune study on 70 % / 30 % splits (this one and
    tune_extension_study.py): `summary` prints summary_fn(out); `run` splits each pending set
    (at most --max-rows rows), calls run_set(args, name, rows, train, test) and appends the
    row (a dict) it returns, resuming where --out stops. `extra(parser)` adds a study's own
    arguments."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("mode", choices=["run", "summary"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-rows", type=int, default=6000, help="skip larger sets (time)")
    ap.add_argument("--flynn", default=os.path.join(ROOT, "build", "flynn"))
    ap.add_argument("--sklearn", action="store_true", help="scikit-learn's sets instead of the validation half")
    ap.add_argument("--only", default="", help="comma-separated dataset names")
    if extra:
        extra(ap)
    a = ap.parse_args()
    if a.mode == "summary":
        summary_fn(a.out)
        return
    a.work = os.path.dirname(os.path.abspath(a.out))
    files = sklearn_sets(a.work) if a.sklearn else halves()[1]
    for path, name in pending(files, a.only, a.out):
        (train, test), n = split_file(path, a.work)
        if n > a.max_rows:
            continue
        try:
            row = run_set(a, name, n, train, test)
        except (RuntimeError, KeyError) as e:
            print(f"{name}: FAILED {e}", file=sys.stderr)
            continue
        if row is None:
            continue
        append(a.out, row)
        print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in row.items() if k != "dataset"), flush=True)


def run_metrics(a, name, n, train, test):
    """One set: `flynn tune` on the 70 % with each metric, its model judged on the 30 %."""
    row = {"dataset": name, "rows": n}
    for metric in METRICS:
        j = run([a.flynn, "tune", "--data", train, "--test", test, "--model", os.path.join(a.work, "last.flynn"),
                 "--budget", str(a.budget), "--folds", str(a.folds), "--metric", metric, "--json", "--quiet",
                 "--threads", str(a.threads)])
        t = j["test"]
        row.update({f"{metric}_log_loss": t["log_loss"], f"{metric}_ece": t["ece"],
                    f"{metric}_accuracy": t["accuracy"], f"{metric}_seconds": j["seconds"],
                    f"{metric}_config": j["config"]["variant"] if "variant" in j["config"] else ""})
    return row


if __name__ == "__main__":
    split_study(summary, run_metrics, __doc__)
