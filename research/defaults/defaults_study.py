#!/usr/bin/env python3
"""The measurement behind flynn's default hyper-parameters (research/defaults/history.md).

For every dataset of an OpenML-style folder (MANIFEST.tsv) and every candidate setting,
runs `flynn eval --json` (10-fold stratified CV, fold seed 0) and, once per dataset, the
tuned exact-kNN baseline on the same folds (`--knn`). Writes one JSON line per
(dataset, setting) to OUT/results.jsonl (resumable: finished pairs are skipped) and prints
a summary: per setting, the median and mean gap to tuned kNN and the number of datasets
within 2 and 5 points.

usage: defaults_study.py FLYNN_BINARY DATA_DIR OUT_DIR [--datasets a,b] [--settings s1,s2]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

# name -> extra flags. Ratios are the reference's (m = factor*d, s = sparsity*d).
SETTINGS = {
    "ef64_s0.1_r32_g0.5_min4096": ["--expansion-factor", "64", "--connection-sparsity", "0.1", "--rho", "32", "--gamma", "0.5"],
    "ef256_s0.3_r32_g0": ["--expansion-factor", "256", "--connection-sparsity", "0.3", "--rho", "32", "--gamma", "0"],
    "ef256_s0.3_r32_g0.5": ["--expansion-factor", "256", "--connection-sparsity", "0.3", "--rho", "32", "--gamma", "0.5"],
    "ef256_s0.3_r32_g0.8": ["--expansion-factor", "256", "--connection-sparsity", "0.3", "--rho", "32", "--gamma", "0.8"],
    "ef256_s0.1_r32_g0.8": ["--expansion-factor", "256", "--connection-sparsity", "0.1", "--rho", "32", "--gamma", "0.8"],
    "ef256_s0.3_r16_g0.8": ["--expansion-factor", "256", "--connection-sparsity", "0.3", "--rho", "16", "--gamma", "0.8"],
    "ef256_s0.3_r64_g0.8": ["--expansion-factor", "256", "--connection-sparsity", "0.3", "--rho", "64", "--gamma", "0.8"],
    "ef1024_s0.3_r32_g0.8": ["--expansion-factor", "1024", "--connection-sparsity", "0.3", "--rho", "32", "--gamma", "0.8"],
    "ef64_s0.3_r32_g0.8": ["--expansion-factor", "64", "--connection-sparsity", "0.3", "--rho", "32", "--gamma", "0.8"],
    "ef256_s0.3_r64_g0.8_densify": ["--expansion-factor", "256", "--connection-sparsity", "0.3", "--rho", "64", "--gamma", "0.8", "--preprocess", "densify"],
    "ef256_s0.1_r64_g0.8_densify": ["--expansion-factor", "256", "--connection-sparsity", "0.1", "--rho", "64", "--gamma", "0.8", "--preprocess", "densify"],
    "ef64_s0.3_r64_g0.8_densify": ["--expansion-factor", "64", "--connection-sparsity", "0.3", "--rho", "64", "--gamma", "0.8", "--preprocess", "densify"],
    # m from n: {M} is replaced by max(256*d, 8*n) (m grows with the rows, as Theorem 3 asks)
    "m8n_s0.3_r64_g0.8": ["--m", "{M8N}", "--connection-sparsity", "0.3", "--rho", "64", "--gamma", "0.8"],
    "ef256_s0.3_r128_g0.8": ["--expansion-factor", "256", "--connection-sparsity", "0.3", "--rho", "128", "--gamma", "0.8"],
    "ef256_s0.3_r64_g0.9": ["--expansion-factor", "256", "--connection-sparsity", "0.3", "--rho", "64", "--gamma", "0.9"],
    "ef256_s0.5_r64_g0.8": ["--expansion-factor", "256", "--connection-sparsity", "0.5", "--rho", "64", "--gamma", "0.8"],
    "default": [],  # whatever this build's defaults are
    "m8n_s0.3_r64_g0.8_densify": ["--m", "{M8N}", "--connection-sparsity", "0.3", "--rho", "64", "--gamma", "0.8", "--preprocess", "densify"],
}


def manifest(data_dir):
    with open(os.path.join(data_dir, "MANIFEST.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    out = []
    for r in rows:
        path = os.path.join(data_dir, f"{r['did']}_{r['name']}.csv.gz")
        if os.path.exists(path):
            out.append((f"{r['did']}_{r['name']}", path, int(r["n"]), int(r["d"]) - 1))
    return out


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("flynn")
    ap.add_argument("data_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--datasets", default="")
    ap.add_argument("--settings", default="")
    ap.add_argument("--threads", default="2")
    ap.add_argument("--markdown", metavar="SETTING", default="",
                    help="print a Markdown table of SETTING vs tuned kNN per dataset and exit")
    a = ap.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    out = os.path.join(a.out_dir, "results.jsonl")
    done = {}
    if os.path.exists(out):
        for line in open(out):
            j = json.loads(line)
            done[(j["dataset"], j["setting"])] = j
    if a.markdown:
        return markdown(done, a.markdown)
    sets = manifest(a.data_dir)
    sizes = {}
    if a.datasets:
        wanted = set(a.datasets.split(","))
        sets = [s for s in sets if s[0] in wanted or s[0].split("_", 1)[1] in wanted]
    sizes = {name: (n, d) for name, _, n, d in sets}
    settings = a.settings.split(",") if a.settings else list(SETTINGS)
    for name, path, n, d in sets:
        for setting in ["knn"] + settings:
            if (name, setting) in done:
                continue
            base = [a.flynn, "eval", "--data", path, "--json", "--quiet", "--threads", a.threads]
            try:
                if setting == "knn":
                    j = run(base + ["--knn", "--m", "4", "--s", "1", "--rho", "1"])
                    rec = {"dataset": name, "setting": "knn", "accuracy": j["knn"]["accuracy_mean"],
                           "best_k": j["knn"]["best_k"]}
                else:
                    m8n = str(max(256 * d, 8 * int(n * 0.9)))
                    j = run(base + [f.replace("{M8N}", m8n) for f in SETTINGS[setting]])
                    rec = {"dataset": name, "setting": setting, "accuracy": j["accuracy_mean"],
                           "seconds": j["seconds"], "config": j["config"]}
            except RuntimeError as e:
                rec = {"dataset": name, "setting": setting, "error": str(e)}
            done[(name, setting)] = rec
            with open(out, "a") as f:
                f.write(json.dumps(rec) + "\n")
            print(json.dumps(rec), flush=True)
    summarize(done, settings)


def summarize(done, settings):
    names = sorted({d for d, s in done if s == "knn" and "accuracy" in done[(d, s)]})
    print(f"\n{'setting':<32} {'n':>3} {'median gap':>10} {'mean gap':>9} {'<=2pt':>6} {'<=5pt':>6} {'secs':>7}")
    for s in settings:
        gaps, secs = [], 0.0
        for d in names:
            r = done.get((d, s))
            if r and "accuracy" in r:
                gaps.append(done[(d, "knn")]["accuracy"] - r["accuracy"])
                secs += r.get("seconds", 0.0)
        if not gaps:
            continue
        print(f"{s:<32} {len(gaps):>3} {100*statistics.median(gaps):>10.2f} {100*statistics.mean(gaps):>9.2f} "
              f"{sum(g <= 0.02 for g in gaps):>6} {sum(g <= 0.05 for g in gaps):>6} {secs:>7.1f}")


def markdown(done, setting):
    names = sorted({d for d, s in done if s == "knn" and "accuracy" in done[(d, s)]},
                   key=lambda n: int(n.split("_")[0]))
    print(f"| dataset | d | tuned kNN (k) | FlyNN `{setting}` | gap (points) |")
    print("|---|---|---|---|---|")
    gaps = []
    for d in names:
        k, r = done[(d, "knn")], done.get((d, setting))
        if not r or "accuracy" not in r:
            continue
        gap = 100 * (k["accuracy"] - r["accuracy"])
        gaps.append(gap)
        c = r.get("config", {})
        print(f"| {d} | {c.get('d', '?')} | {k['accuracy']:.3f} ({k['best_k']}) | {r['accuracy']:.3f} | {gap:+.1f} |")
    gaps.sort()
    print(f"\n{len(gaps)} datasets: median gap {statistics.median(gaps):.2f} points, mean {statistics.mean(gaps):.2f}; "
          f"within 2 points on {sum(g <= 2 for g in gaps)}, within 5 on {sum(g <= 5 for g in gaps)}, "
          f"FlyNN ahead on {sum(g < 0 for g in gaps)}.")


if __name__ == "__main__":
    sys.exit(main())
