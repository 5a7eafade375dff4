"""Writes the first N rows of Fashion-MNIST's training images as a CSV for dp_study.

Usage: python3 research/dp-utility/fashion_csv.py OUT.csv [N=20000]

Reads Debian's dataset-fashion-mnist IDX files (the same files as
research/common/fashion_data.py, without numpy): 784 pixel columns p0..p783 (0-255) and
the label 0-9 in the last column, "class". Training rows 0..N-1 only; dp_study then holds
out a stratified 30 % of them, never trained on.
"""
import gzip
import sys

FASHION = "/usr/share/datasets/fashion-mnist"


def main():
    out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    with gzip.open(f"{FASHION}/train-images-idx3-ubyte.gz", "rb") as f:
        images = f.read()[16:]
    with gzip.open(f"{FASHION}/train-labels-idx1-ubyte.gz", "rb") as f:
        labels = f.read()[8:]
    with open(out, "w") as f:
        f.write(",".join(f"p{j}" for j in range(784)) + ",class\n")
        for r in range(n):
            row = images[r * 784:(r + 1) * 784]
            f.write(",".join(map(str, row)) + f",{labels[r]}\n")


if __name__ == "__main__":
    main()
