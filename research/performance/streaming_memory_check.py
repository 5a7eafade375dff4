#!/usr/bin/python3
"""Peak memory of streamed `flynn train` and `flynn predict` on a large table (issue 13).

Generates a CSV of --rows x --features random features with a class column (default
1,000,000 x 20, about 190 MB; written to --workdir, never committed), then runs

    flynn train   --data big.csv --model big.flynn
    flynn predict --model big.flynn --data big.csv --out big.pred.csv

under /usr/bin/time -v and prints each command's peak RSS against its target (train
200 MB, predict 100 MB). With --compare it also checks that the streamed results equal
the whole-file ones: the model against one trained from standard input (which flynn
loads into memory, as a pipe cannot be read twice) and the predictions against one
chunk holding every row. Exits 1 when a target is missed or a comparison differs.

Usage: /usr/bin/python3 research/performance/streaming_memory_check.py [--flynn build/flynn]
       [--rows N] [--features D] [--workdir DIR] [--compare] [--keep]
"""
import argparse
import filecmp
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

TRAIN_TARGET_MB = 200
PREDICT_TARGET_MB = 100


def write_table(path, rows, features, seed=13):
    """Random features; the class (c0..c9) is a noisy function of the first features."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        f.write(",".join(f"x{j}" for j in range(features)) + ",class\n")
        block = 100_000
        for start in range(0, rows, block):
            n = min(block, rows - start)
            x = rng.normal(size=(n, features)).astype(np.float32)
            score = x[:, 0] + 0.5 * x[:, 1 % features] + 0.3 * rng.normal(size=n)
            label = np.clip(((score + 3) / 6 * 10).astype(int), 0, 9)
            lines = [",".join(f"{v:.4g}" for v in row) + f",c{c}" for row, c in zip(x, label)]
            f.write("\n".join(lines) + "\n")


def peak_rss_mb(cmd, stdin=None):
    """Runs cmd under /usr/bin/time -v; returns (peak RSS in MB, seconds, stderr)."""
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdin=stdin, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", r.stderr).group(1)
    seconds = sum(float(p) * 60 ** i for i, p in enumerate(reversed(wall.split(":"))))
    return kb / 1024.0, seconds, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flynn", default="build/flynn")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--compare", action="store_true", help="also check streamed == whole-file")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()
    flynn = os.path.abspath(args.flynn)
    work = args.workdir or tempfile.mkdtemp(prefix="flynn-stream-")
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, "big.csv")
    model = os.path.join(work, "big.flynn")
    pred = os.path.join(work, "big.pred.csv")
    ok = True
    try:
        if not os.path.exists(data):
            write_table(data, args.rows, args.features)
        print(f"data: {data} ({os.path.getsize(data) / 2**20:.0f} MiB, {args.rows} rows x "
              f"{args.features} features)")
        train_mb, train_s, _ = peak_rss_mb([flynn, "train", "--data", data, "--model", model, "--quiet"])
        pred_mb, pred_s, _ = peak_rss_mb([flynn, "predict", "--model", model, "--data", data,
                                          "--out", pred, "--quiet"])
        for what, mb, s, target in (("train", train_mb, train_s, TRAIN_TARGET_MB),
                                    ("predict", pred_mb, pred_s, PREDICT_TARGET_MB)):
            verdict = "ok" if mb < target else "OVER"
            ok &= mb < target
            print(f"{what:8s} peak RSS {mb:7.1f} MB (target < {target} MB) {verdict}; {s:.1f} s")
        if args.compare:
            whole_model = os.path.join(work, "whole.flynn")
            # Through a pipe (not a redirected file, which is regular and would stream).
            cat = subprocess.Popen(["cat", data], stdout=subprocess.PIPE)
            mem_mb, _, _ = peak_rss_mb([flynn, "train", "--data", "/dev/stdin", "--model",
                                        whole_model, "--quiet"], stdin=cat.stdout)
            cat.stdout.close()
            cat.wait()
            same = filecmp.cmp(model, whole_model, shallow=False)
            ok &= same
            print(f"model from the file == model from stdin (in memory, peak RSS {mem_mb:.0f} MB): {same}")
            one_chunk = os.path.join(work, "one-chunk.pred.csv")
            subprocess.run([flynn, "predict", "--model", model, "--data", data, "--out", one_chunk,
                            "--quiet", "--chunk-rows", str(args.rows)], check=True,
                           stdout=subprocess.DEVNULL)
            same = filecmp.cmp(pred, one_chunk, shallow=False)
            ok &= same
            print(f"predictions streamed == one chunk of all rows: {same}")
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
