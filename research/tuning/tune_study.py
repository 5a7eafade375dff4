#!/usr/bin/python3
"""Held-out study of `flynn tune` and of calibrated probabilities (docs/guide/reproduce.md).

Held-out rule (fixed before any result was looked at, shared with research/defaults/history.md): sort the
rows of ../shared/data/openml/MANIFEST.tsv by `did` (numeric); 0-based even positions are the
SELECTION half, odd positions the VALIDATION half. scikit-learn's bundled sets (iris, wine,
breast-cancer, digits) are a second validation group.

Modes (each writes one TSV row per dataset and skips datasets already in its TSV, so an
interrupted run resumes):
  select    SELECTION half only: `flynn eval --calibration` with the default configuration;
            the per-set fitted temperatures choose kDefaultTemperature (their median).
  validate  VALIDATION half (and --sklearn: scikit-learn's sets): `flynn tune --budget B
            --folds K --knn`; accuracy, tuned kNN (better of L2 rows / standardised), gap,
            held-out (cross-fitted) log-loss and ECE of FlyNN, log-loss and ECE of kNN's vote
            fractions.
  summary   medians and fractions from a validate TSV.

Usage: research/tuning/tune_study.py select|calibration|validate|summary --out FILE.tsv [--budget 60] [--folds 5]
       [--flynn build/flynn] [--sklearn | --half selection] [--only NAME,...] [--threads 2]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# ../shared/data/openml beside the repository (FLYNN_OPENML_DIR overrides, as in the tests).
OPENML = os.environ.get("FLYNN_OPENML_DIR", os.path.join(ROOT, "..", "shared", "data", "openml"))
SKLEARN = "/usr/lib/python3/dist-packages/sklearn/datasets/data"


def halves():
    with open(os.path.join(OPENML, "MANIFEST.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    rows.sort(key=lambda r: int(r["did"]))
    files = [os.path.join(OPENML, f"{r['did']}_{r['name']}.csv.gz") for r in rows]
    return files[0::2], files[1::2]


def sklearn_sets(tmp):
    """scikit-learn's bundled sets as CSV files with the label last (written once into tmp)."""
    import numpy as np
    from sklearn import datasets
    out = []
    for name, loader in [("iris", datasets.load_iris), ("wine", datasets.load_wine),
                         ("breast-cancer", datasets.load_breast_cancer), ("digits", datasets.load_digits)]:
        path = os.path.join(tmp, f"sklearn_{name}.csv")
        if not os.path.exists(path):
            d = loader()
            np.savetxt(path, np.column_stack([d.data, d.target]), delimiter=",",
                       fmt=["%.10g"] * d.data.shape[1] + ["%d"])
        out.append(path)
    return out


def name_of(path):
    return os.path.basename(path).split(".")[0]


def done_names(out):
    if not os.path.exists(out):
        return set()
    with open(out) as f:
        return {r["dataset"] for r in csv.DictReader(f, delimiter="\t")}


def pending(files, only, out):
    """(path, name) of the files still to run: those named in `only` (comma-separated
    names; every file when empty) whose name is not yet a row of the TSV `out`."""
    keep = set(only.split(",")) if only else None
    seen = done_names(out)
    return [(p, name_of(p)) for p in files
            if (keep is None or name_of(p) in keep) and name_of(p) not in seen]


def append(out, row):
    new = not os.path.exists(out)
    with open(out, "a") as f:
        w = csv.DictWriter(f, fieldnames=list(row), delimiter="\t")
        if new:
            w.writeheader()
        w.writerow(row)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["select", "calibration", "validate", "summary"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--flynn", default=os.path.join(ROOT, "build", "flynn"))
    ap.add_argument("--sklearn", action="store_true", help="validate scikit-learn's sets instead")
    ap.add_argument("--half", choices=["validation", "selection"], default="validation",
                    help="validate, calibration: which OpenML half (selection: `flynn tune` on the sets the defaults "
                         "were chosen on, reported for completeness)")
    ap.add_argument("--only", default="", help="comma-separated dataset names")
    a = ap.parse_args()

    if a.mode == "summary":
        with open(a.out) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        if "gap" not in rows[0]:  # a select or calibration TSV
            print("| dataset | n | CV accuracy (defaults) | fitted t | held-out ECE | ECE at default t |")
            print("|---|---|---|---|---|---|")
            for r in rows:
                print(f"| {r['dataset']} | {r['rows']} | {float(r['accuracy']):.4f} | {float(r['temperature']):.4g} | "
                      f"{float(r['heldout_ece']):.4f} | {float(r['default_ece']):.4f} |")
            print(f"\n{len(rows)} sets: median fitted t {statistics.median(float(r['temperature']) for r in rows):.4g}, "
                  f"median held-out ECE {statistics.median(float(r['heldout_ece']) for r in rows):.4f}, "
                  f"median ECE at default t {statistics.median(float(r['default_ece']) for r in rows):.4f}")
            return
        print("| dataset | n | d | FlyNN (tune) | kNN L2 | kNN std | tuned kNN | gap | FlyNN ECE | FlyNN log-loss "
              "| kNN ECE | kNN log-loss |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            f = {k: float(r[k]) for k in ["flynn", "knn_l2", "knn_std", "tuned_knn", "gap", "heldout_ece",
                                          "heldout_log_loss", "knn_ece", "knn_log_loss"]}
            print(f"| {r['dataset']} | {r['rows']} | {r['features']} | {f['flynn']:.4f} | {f['knn_l2']:.4f} | "
                  f"{f['knn_std']:.4f} | {f['tuned_knn']:.4f} | {f['gap']:+.4f} | {f['heldout_ece']:.4f} | "
                  f"{f['heldout_log_loss']:.4f} | {f['knn_ece']:.4f} | {f['knn_log_loss']:.4f} |")
        print()
        gaps = [float(r["gap"]) for r in rows]
        ahead = sum(float(r["flynn"]) > float(r["tuned_knn"]) for r in rows)
        print(f"{len(rows)} sets: median gap {statistics.median(gaps):.4f}, mean {statistics.mean(gaps):.4f}, "
              f"worst {max(gaps):.4f}; FlyNN ahead (strictly) on {ahead}/{len(rows)}")
        for k in ["heldout_ece", "heldout_log_loss", "knn_ece", "knn_log_loss", "default_ece"]:
            print(f"median {k}: {statistics.median(float(r[k]) for r in rows):.4f}")
        return

    selection, validation = halves()
    if a.mode == "select":
        files = selection
    else:  # calibration, validate
        files = (sklearn_sets(os.path.dirname(os.path.abspath(a.out))) if a.sklearn
                 else selection if a.half == "selection" else validation)
    for path, name in pending(files, a.only, a.out):
        try:
            if a.mode in ("select", "calibration"):
                j = run([a.flynn, "eval", "--data", path, "--folds", str(a.folds), "--calibration", "--json",
                         "--quiet", "--threads", str(a.threads)])
                c = j["calibration"]
                row = {"dataset": name, "rows": j["rows"], "accuracy": j["accuracy_mean"],
                       "temperature": c["temperature"], "heldout_ece": c["heldout_ece"],
                       "heldout_log_loss": c["heldout_log_loss"], "default_ece": c["default_ece"],
                       "default_log_loss": c["default_log_loss"]}
            else:
                model = os.path.join(os.path.dirname(os.path.abspath(a.out)), "last_tuned.flynn")
                j = run([a.flynn, "tune", "--data", path, "--model", model,
                         "--budget", str(a.budget), "--folds", str(a.folds), "--knn", "--json", "--quiet",
                         "--threads", str(a.threads)])
                c, k = j["calibration"], j["knn"]
                tuned = k["tuned"]["accuracy_mean"]
                row = {"dataset": name, "rows": j["rows"], "features": j["features"],
                       "flynn": j["accuracy"], "knn_l2": k["l2"]["accuracy_mean"],
                       "knn_std": k["standardized"]["accuracy_mean"], "tuned_knn": tuned,
                       "gap": tuned - j["accuracy"], "config": json.dumps(j["config"]),
                       "temperature": c["temperature"], "heldout_ece": c["heldout_ece"],
                       "heldout_log_loss": c["heldout_log_loss"], "default_ece": c["default_ece"],
                       "knn_ece": k["vote_fraction_ece"], "knn_log_loss": k["vote_fraction_log_loss"],
                       "time_limited": j["search"]["time_limited"], "seconds": j["seconds"]}
        except RuntimeError as e:
            print(f"{name}: FAILED {e}", file=sys.stderr)
            continue
        append(a.out, row)
        print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in row.items() if k not in ("dataset", "config")),
              flush=True)


if __name__ == "__main__":
    main()
