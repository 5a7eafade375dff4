#!/usr/bin/python3
"""Held-out check of `flynn tune`'s last candidate, second-order filters (TuneOptions::try_pairs;
docs/defaults.md, "Twelfth round").

Nothing is chosen here (the candidate's pairs = 4 came from the eleventh round's selection
groups). Each set of the VALIDATION half of ../shared/data/openml (scripts/heldout_split.py)
with at most --max-rows rows and, with --sklearn, scikit-learn's bundled sets is split once,
stratified, 70 % / 30 % (seed 0, as scripts/tune_metric_study.py); `flynn tune` runs on the
70 % and says whether it took pairs (by 5-fold CV on those rows); then both forms of its
configuration — with and without pairs — are trained on the 70 % and scored on the 30 % they
never saw. The question: when tune takes pairs, do new rows agree, and what does taking them
(or not) cost where it was wrong?

Usage: scripts/tune_pairs_study.py run|summary --out FILE.tsv [--budget 20] [--folds 5]
       [--flynn build/flynn] [--sklearn] [--max-rows 6000] [--only NAME,...] [--threads 2]
"""
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tune_metric_study import split_study  # noqa: E402
from tune_study import run  # noqa: E402

# config JSON key -> `flynn train` flag (the table of settings' rows a config holds).
FLAGS = {"m": "--m", "s": "--s", "rho": "--rho", "gamma": "--gamma", "seed": "--seed", "preprocess": "--preprocess",
         "variant": "--variant", "class_weight": "--class-weight", "filter_scoring": "--filter-scoring",
         "pairs": "--pairs"}


def test_accuracy(flynn, config, train, test, model, threads):
    flags = [x for k, flag in FLAGS.items() for x in (flag, str(config[k]))]
    j = run([flynn, "train", "--data", train, "--test", test, "--model", model, "--json", "--quiet",
             "--threads", str(threads)] + flags)
    return j["test"]["accuracy"]


def summary(out):
    with open(out) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    print("| dataset | rows | tune took pairs | CV without → with pairs | test without | test with | test of tune's choice − without |")
    print("|---|---|---|---|---|---|---|")
    gain, chosen_gain = [], []
    for r in rows:
        took = r["chose_pairs"] == "True"
        without, with_ = float(r["test_without"]), float(r["test_with"])
        g = 100 * (with_ - without)
        gain.append(g)
        chosen_gain.append(g if took else 0.0)
        print(f"| {r['dataset']} | {r['rows']} | {'yes' if took else 'no'} | {float(r['cv_without']):.4f} → "
              f"{float(r['cv_with']):.4f} | {without:.4f} | {with_:.4f} | {chosen_gain[-1]:+.2f} |")
    took = [r for r in rows if r["chose_pairs"] == "True"]
    right = sum((float(r["test_with"]) >= float(r["test_without"])) == (r["chose_pairs"] == "True") for r in rows)
    print(f"\n{len(rows)} sets; tune took pairs on {len(took)}; held-out accuracy of pairs − without "
          f"(points): median {statistics.median(gain):+.2f}, mean {statistics.mean(gain):+.2f}; of tune's choice − "
          f"without: median {statistics.median(chosen_gain):+.2f}, mean {statistics.mean(chosen_gain):+.2f}, worst "
          f"{min(chosen_gain):+.2f}; the choice agreed with the test split (pairs not worse iff taken) on {right}")


def run_set(a, name, n, train, test):
    """One set: `flynn tune` on the 70 %, then both forms of its configuration on the 30 %."""
    model = os.path.join(a.work, "last.flynn")
    j = run([a.flynn, "tune", "--data", train, "--model", model, "--budget", str(a.budget),
             "--folds", str(a.folds), "--json", "--quiet", "--threads", str(a.threads)])
    if "pairs_config" not in j:
        print(f"{name}: no pairs candidate", file=sys.stderr)
        return None
    with_pairs = j["pairs_config"]
    without = dict(with_pairs, pairs=0)
    return {"dataset": name, "rows": n, "chose_pairs": j["chose_pairs"], "cv_with": j["pairs_metric"],
            "test_without": test_accuracy(a.flynn, without, train, test, model, a.threads),
            "test_with": test_accuracy(a.flynn, with_pairs, train, test, model, a.threads),
            "variant": with_pairs["variant"], "seconds": j["seconds"], "cv_without": j["metric_before_pairs"]}


if __name__ == "__main__":
    split_study(summary, run_set, __doc__)
