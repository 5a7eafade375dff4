#!/usr/bin/env python3
"""The held-out rule of the variants/defaults study (research/defaults/history.md), fixed before any
result was looked at:

  sort the rows of MANIFEST.tsv by `did` (numeric); 0-based even positions form the
  SELECTION half, odd positions the VALIDATION half.

Variants and defaults are chosen on the selection half only; the validation half (and
scikit-learn's bundled iris, wine, breast-cancer, digits as a second group) is only
reported. Prints `did<TAB>name<TAB>half` for every set (research/common/heldout_split.tsv is this
output for ../shared/data/openml).

usage: heldout_split.py MANIFEST.tsv
"""
import csv
import sys


def split(manifest_path):
    with open(manifest_path) as f:
        rows = sorted(csv.DictReader(f, delimiter="\t"), key=lambda r: int(r["did"]))
    return [(r["did"], r["name"], "selection" if i % 2 == 0 else "validation")
            for i, r in enumerate(rows)]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print("did\tname\thalf")
    for did, name, half in split(sys.argv[1]):
        print(f"{did}\t{name}\t{half}")


if __name__ == "__main__":
    main()
