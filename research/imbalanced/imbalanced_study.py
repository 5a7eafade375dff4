#!/usr/bin/python3
"""Imbalanced classes (issue 20): FlyNN with and without `--class-weight balanced`, and
`flynn tune --metric balanced_accuracy`, against exact kNN tuned for balanced accuracy on the
same folds (research/defaults/history.md, "Imbalanced classes").

Which sets (fixed before any result was looked at): a set is imbalanced when its smallest
class has at most half the rows of its largest.
  tables      ../shared/data/tables/ (MANIFEST.tsv; selection data in the brief's sense),
              every imbalanced one;
  validation  the OpenML VALIDATION half (research/common/heldout_split.tsv), every imbalanced set
              with at most 20000 rows.
Nothing was chosen on either group: the balanced weights are scikit-learn's formula
n / (L·n_l), applied as it is, and the tune run uses tune's defaults but for the metric.

Per set: `flynn eval --folds 5 --knn --json` with class weight none and balanced, and
`flynn tune --folds 5 --budget B --metric balanced_accuracy --class-weight balanced --knn
--json`. Writes one JSON line per set (resumes: sets already in --out are skipped) and, with
--summary, a markdown table.

--auto OUT2 (after the runs above): for every set of --summary's file, `flynn eval --folds 5
--auto --class-weight balanced --json` (nested CV: the choice of `train --auto`, which judges
by balanced accuracy when classes are weighted, made on each fold's training rows), one JSON
line per set in OUT2; --summary then adds its column when given --auto OUT2.

Usage: research/imbalanced/imbalanced_study.py --out research/imbalanced/results.jsonl
       [--group tables|validation] [--budget 30] [--flynn build/flynn] [--threads 2]
       research/imbalanced/imbalanced_study.py --summary research/imbalanced/results.jsonl [--auto OUT2]
       research/imbalanced/imbalanced_study.py --summary research/imbalanced/results.jsonl --auto OUT2 --run-auto [--group G]
"""
import argparse
import csv
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(ROOT, "..", "shared", "data")
MAX_MINORITY_TO_MAJORITY = 0.5


def class_shares(path, label=None):
    """Shares of each class of a gzip CSV (label column `label`, else the last)."""
    with gzip.open(path, "rt", newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        col = header.index(label) if label else len(header) - 1
        counts = Counter(row[col] for row in reader if row)
    n = sum(counts.values())
    return {k: v / n for k, v in counts.items()}, n


def tables():
    out = []
    with open(os.path.join(SHARED, "tables", "MANIFEST.tsv")) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            out.append((r["file"].replace(".csv.gz", ""), os.path.join(SHARED, "tables", r["file"]), r["label"]))
    return out


def validation():
    halves = {}
    with open(os.path.join(ROOT, "research", "common", "heldout_split.tsv")) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            halves[r["did"]] = r["half"]
    out = []
    with open(os.path.join(SHARED, "openml", "MANIFEST.tsv")) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            if halves.get(r["did"]) == "validation" and int(r["n"]) <= 20000:
                out.append((r["name"], os.path.join(SHARED, "openml", f"{r['did']}_{r['name']}.csv.gz"), None))
    return out


def run(flynn, args, threads):
    cmd = [flynn] + args + ["--threads", str(threads), "--quiet", "--json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def study(o):
    done = set()
    if os.path.exists(o.out):
        with open(o.out) as f:
            done = {json.loads(line)["set"] for line in f if line.strip()}
    sets = tables() if o.group == "tables" else validation()
    os.makedirs(os.path.dirname(os.path.abspath(o.out)), exist_ok=True)
    for name, path, label in sets:
        if name in done:
            continue
        shares, n = class_shares(path, label)
        if min(shares.values()) > MAX_MINORITY_TO_MAJORITY * max(shares.values()):
            continue
        base = ["--data", path, "--folds", "5"] + (["--label-col", label] if label else [])
        row = {"set": name, "group": o.group, "rows": n, "classes": len(shares),
               "minority_share": round(min(shares.values()), 4)}
        for cw in ("none", "balanced"):
            j = run(o.flynn, ["eval"] + base + ["--knn", "--class-weight", cw], o.threads)
            row[cw] = {k: j[k] for k in ("accuracy_mean", "balanced_accuracy", "macro_f1")}
            row["knn_balanced_accuracy"] = j["knn_tuned_balanced_accuracy"]["balanced_accuracy"]
            row["knn_macro_f1"] = j["knn_tuned_macro_f1"]["macro_f1"]
            row["knn_accuracy"] = j["knn_tuned"]["accuracy_mean"]
        with tempfile.TemporaryDirectory() as tmp:
            j = run(o.flynn, ["tune"] + base + ["--model", os.path.join(tmp, "m.flynn"), "--budget", str(o.budget),
                                                "--metric", "balanced_accuracy", "--class-weight", "balanced"],
                    o.threads)
            row["tuned"] = {k: j[k] for k in ("accuracy", "balanced_accuracy", "macro_f1")}
            row["tuned"]["config"] = j["config"]
            row["tuned"]["seconds"] = j["seconds"]
        with open(o.out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(f"{name}: balanced accuracy none {row['none']['balanced_accuracy']:.3f}, balanced "
              f"{row['balanced']['balanced_accuracy']:.3f}, tuned {row['tuned']['balanced_accuracy']:.3f}, "
              f"kNN {row['knn_balanced_accuracy']:.3f}", flush=True)


def auto_runs(o):
    """Nested CV of `train --auto --class-weight balanced` for every set of the results file."""
    done = set()
    if os.path.exists(o.auto):
        with open(o.auto) as f:
            done = {json.loads(line)["set"] for line in f if line.strip()}
    paths = {name: (path, label) for name, path, label in tables() + validation()}
    with open(o.summary) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for r in rows:
        if r["set"] in done or r["group"] != o.group:
            continue
        path, label = paths[r["set"]]
        base = ["--data", path, "--folds", "5"] + (["--label-col", label] if label else [])
        j = run(o.flynn, ["eval"] + base + ["--auto", "--class-weight", "balanced"], o.threads)
        rec = {"set": r["set"], "group": r["group"], "balanced_accuracy": j["balanced_accuracy"],
               "accuracy_mean": j["accuracy_mean"], "macro_f1": j["macro_f1"], "seconds": j["seconds"],
               "chosen": [f["chosen"] + f" g={f['gamma']}" for f in j["auto"]["folds"]]}
        with open(o.auto, "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(f"{r['set']}: auto balanced accuracy {rec['balanced_accuracy']:.3f} (kNN "
              f"{r['knn_balanced_accuracy']:.3f}, balanced {r['balanced']['balanced_accuracy']:.3f})", flush=True)


def summary(path, auto_path=None):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    if auto_path:
        with open(auto_path) as f:
            auto = {j["set"]: j for j in map(json.loads, f)}
        for group in sorted({r["group"] for r in rows}):
            g = [r for r in rows if r["group"] == group and r["set"] in auto]
            print(f"\n**{group}**, `eval --auto --class-weight balanced` ({len(g)} sets)\n")
            print("| set | kNN bal. acc. | FlyNN balanced | auto, balanced | auto's choices (5 folds) |")
            print("|---|---|---|---|---|")
            for r in g:
                a = auto[r["set"]]
                print(f"| {r['set']} | {r['knn_balanced_accuracy']:.3f} | {r['balanced']['balanced_accuracy']:.3f} | "
                      f"{a['balanced_accuracy']:.3f} | {', '.join(sorted(set(a['chosen'])))} |")
            d = [auto[r["set"]]["balanced_accuracy"] - r["knn_balanced_accuracy"] for r in g]
            if d:
                print(f"\nauto − kNN: median {100 * statistics.median(d):+.1f} points, ≥ kNN on "
                      f"{sum(x >= 0 for x in d)} of {len(g)}")
        return
    for group in sorted({r["group"] for r in rows}):
        g = [r for r in rows if r["group"] == group]
        print(f"\n**{group}** ({len(g)} imbalanced sets; 5-fold CV; kNN = exact kNN tuned for the same metric "
              "over k ∈ {1,…,64} × {L2 rows, standardised})\n")
        print("| set | rows | minority share | kNN bal. acc. | FlyNN none | FlyNN balanced | tune --metric "
              "balanced_accuracy | accuracy none → balanced | macro-F1 kNN / none / balanced |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in g:
            print(f"| {r['set']} | {r['rows']} | {r['minority_share']:.3f} | {r['knn_balanced_accuracy']:.3f} | "
                  f"{r['none']['balanced_accuracy']:.3f} | {r['balanced']['balanced_accuracy']:.3f} | "
                  f"{r['tuned']['balanced_accuracy']:.3f} | {r['none']['accuracy_mean']:.3f} → "
                  f"{r['balanced']['accuracy_mean']:.3f} | {r['knn_macro_f1']:.3f} / {r['none']['macro_f1']:.3f} / "
                  f"{r['balanced']['macro_f1']:.3f} |")
        d_bal = [r["balanced"]["balanced_accuracy"] - r["knn_balanced_accuracy"] for r in g]
        d_tune = [r["tuned"]["balanced_accuracy"] - r["knn_balanced_accuracy"] for r in g]
        d_none = [r["balanced"]["balanced_accuracy"] - r["none"]["balanced_accuracy"] for r in g]
        print(f"\nmedian balanced accuracy, balanced − none: {100 * statistics.median(d_none):+.1f} points; "
              f"balanced − kNN: {100 * statistics.median(d_bal):+.1f} (≥ kNN on {sum(d >= 0 for d in d_bal)} of "
              f"{len(g)}); tune − kNN: {100 * statistics.median(d_tune):+.1f} "
              f"(≥ kNN on {sum(d >= 0 for d in d_tune)} of {len(g)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--summary")
    ap.add_argument("--group", choices=["tables", "validation"], default="tables")
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--flynn", default=os.path.join(ROOT, "build", "flynn"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--auto", help="JSON lines of the --auto runs (with --summary)")
    ap.add_argument("--run-auto", action="store_true", help="run --auto for the sets of --summary's file")
    o = ap.parse_args()
    if o.summary and o.run_auto:
        auto_runs(o)
    elif o.summary:
        summary(o.summary, o.auto)
    elif o.out:
        study(o)
    else:
        ap.error("give --out or --summary")


if __name__ == "__main__":
    sys.exit(main())
