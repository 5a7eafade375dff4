#!/usr/bin/python3
"""Held-out check of one of `flynn tune`'s extension candidates: second-order filters
(--extension pairs: TuneOptions::try_pairs; research/defaults/history.md, "Twelfth round") or transformed
values (--extension value_transform: TuneOptions::try_value_transform; "Fifteenth round").

Nothing is chosen here (pairs = 4 came from the eleventh round's selection groups, log1p from
the fourteenth round's Fashion-MNIST split). Each set of the VALIDATION half of
../shared/data/openml (research/common/heldout_split.py) with at most --max-rows rows and, with
--sklearn, scikit-learn's bundled sets is split once, stratified, 70 % / 30 % (seed 0, as
research/tuning/tune_metric_study.py); `flynn tune` runs on the 70 % and says whether it took the
extension (by 5-fold CV on those rows); then both forms of the configuration it extended —
with and without the extension — are trained on the 70 % and scored on the 30 % they never
saw. The question: when tune takes it, do new rows agree, and what does taking it (or not)
cost where it was wrong?

Usage: research/tuning/tune_extension_study.py run|summary --out FILE.tsv [--extension pairs|value_transform]
       [--budget 20] [--folds 5] [--flynn build/flynn] [--sklearn] [--max-rows 6000] [--only NAME,...]
       [--threads 2]
"""
import csv
import os
import statistics
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from tune_metric_study import split_study  # noqa: E402
from tune_study import run  # noqa: E402

# config JSON key -> `flynn train` flag (the table of settings' rows a config holds).
FLAGS = {"m": "--m", "s": "--s", "rho": "--rho", "gamma": "--gamma", "seed": "--seed", "preprocess": "--preprocess",
         "variant": "--variant", "class_weight": "--class-weight", "filter_scoring": "--filter-scoring",
         "pairs": "--pairs", "paper_half_min_columns": "--paper-half-min-columns",
         "value_transform": "--value-transform"}
# An extension: its key in flynn tune's JSON, and its value when off.
OFF = {"pairs": 0, "value_transform": "none"}


def test_accuracy(flynn, config, train, test, model, threads):
    flags = [x for k, flag in FLAGS.items() for x in (flag, str(config[k]))]
    j = run([flynn, "train", "--data", train, "--test", test, "--model", model, "--json", "--quiet",
             "--threads", str(threads)] + flags)
    return j["test"]["accuracy"]


def took_it(r):
    """Whether tune took the row's extension (files from before --extension say chose_pairs)."""
    return r.get("chose", r.get("chose_pairs")) == "True"


def summary(out):
    with open(out) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    ext = rows[0].get("extension", "pairs") if rows else "pairs"
    print(f"| dataset | rows | tune took {ext} | CV without → with | test without | test with | test of tune's choice − without |")
    print("|---|---|---|---|---|---|---|")
    gain, chosen_gain = [], []
    for r in rows:
        took = took_it(r)
        without, with_ = float(r["test_without"]), float(r["test_with"])
        g = 100 * (with_ - without)
        gain.append(g)
        chosen_gain.append(g if took else 0.0)
        print(f"| {r['dataset']} | {r['rows']} | {'yes' if took else 'no'} | {float(r['cv_without']):.4f} → "
              f"{float(r['cv_with']):.4f} | {without:.4f} | {with_:.4f} | {chosen_gain[-1]:+.2f} |")
    took = [r for r in rows if took_it(r)]
    right = sum((float(r["test_with"]) >= float(r["test_without"])) == took_it(r) for r in rows)
    print(f"\n{len(rows)} sets; tune took {ext} on {len(took)}; held-out accuracy with {ext} − without "
          f"(points): median {statistics.median(gain):+.2f}, mean {statistics.mean(gain):+.2f}; of tune's choice − "
          f"without: median {statistics.median(chosen_gain):+.2f}, mean {statistics.mean(chosen_gain):+.2f}, worst "
          f"{min(chosen_gain):+.2f}; the choice agreed with the test split (not worse iff taken) on {right}")


def run_set(a, name, n, train, test):
    """One set: `flynn tune` on the 70 %, then both forms of the configuration its extension
    candidate extended on the 30 %."""
    ext = a.extension
    model = os.path.join(a.work, "last.flynn")
    j = run([a.flynn, "tune", "--data", train, "--model", model, "--budget", str(a.budget),
             "--folds", str(a.folds), "--json", "--quiet", "--threads", str(a.threads)])
    if f"{ext}_config" not in j:
        print(f"{name}: no {ext} candidate", file=sys.stderr)
        return None
    with_it = j[f"{ext}_config"]
    without = dict(with_it, **{ext: OFF[ext]})
    return {"dataset": name, "rows": n, "extension": ext, "chose": j[f"chose_{ext}"], "cv_with": j[f"{ext}_metric"],
            "test_without": test_accuracy(a.flynn, without, train, test, model, a.threads),
            "test_with": test_accuracy(a.flynn, with_it, train, test, model, a.threads),
            "variant": with_it["variant"], "seconds": j["seconds"], "cv_without": j[f"metric_before_{ext}"]}


if __name__ == "__main__":
    split_study(summary, run_set, __doc__,
                extra=lambda ap: ap.add_argument("--extension", choices=sorted(OFF), default="pairs"))
