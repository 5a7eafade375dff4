"""Checks --dp-T auto under --dp-unit record (research/dp-utility/README.md, "The rule for T").

Usage: python3 research/dp-utility/analyse_record.py [RECORD_GRID.tsv]
       (default research/dp-utility/record_grid.tsv, written by run_grid.sh's loop with
       dp_study --unit record --reps 3)

Under the record unit a party spends ε' = ε, so the implemented rule
T = 2^round(log2(8·ε'/τ)) is 2^round(log2(8·ε/τ)). Prints its mean loss of balanced accuracy
against the best T of the grid and T = 100's, per half, and the best k·ε/τ^b of the same
family on the selection half (for comparison only: the rule was not refitted).
"""
import csv
import math
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
GRID = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "record_grid.tsv")


def pow2(x):
    return int(min(1024, max(1, 2 ** math.floor(math.log2(x) + 0.5))))


def main():
    half = {}
    with open(os.path.join(HERE, "..", "common", "heldout_split.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            half[row["did"]] = row["half"]
    acc = defaultdict(list)
    with open(GRID) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if float(row["epsilon"]) > 0:
                acc[(row["dataset"], int(row["parties"]), float(row["epsilon"]), int(row["T"]))].append(
                    float(row["balanced_accuracy"]))
    mean = {k: sum(v) / len(v) for k, v in acc.items()}
    cells = sorted({k[:3] for k in mean})
    best = {c: max(v for k, v in mean.items() if k[:3] == c) for c in cells}

    def loss(fn, h):
        ls = [best[c] - mean[c + (fn(c[2], c[1]),)] for c in cells if half[c[0].split("_")[0]] == h]
        return sum(ls) / len(ls), len(ls)

    rule = lambda e, t: pow2(8 * e / t)  # ε' = ε under the record unit
    for h in ("selection", "validation"):
        lr, n = loss(rule, h)
        lc, _ = loss(lambda e, t: 100, h)
        print(f"{h:10s}: loss of the rule (8·ε/τ) {lr:.4f}, of T = 100 {lc:.4f} over {n} cells")
    cands = sorted((loss(lambda e, t, k=2.0 ** j, b=b: pow2(k * e / t ** b), "selection")[0], j, b)
                   for j in range(-4, 13) for b in (0, 1, 2))
    print("best of k·ε/τ^b on the selection half:", ", ".join(f"2^{j}·ε/τ^{b}: {l:.4f}" for l, j, b in cands[:4]))


if __name__ == "__main__":
    main()
