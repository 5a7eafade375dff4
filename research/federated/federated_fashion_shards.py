#!/usr/bin/env python3
"""Split Fashion-MNIST's training set into TAU IDX shards for `mpirun flynn federated train`.

Usage: federated_fashion_shards.py OUT_DIR TAU [FASHION_DIR]

Writes OUT_DIR/shard_<r>-images-idx3-ubyte and OUT_DIR/shard_<r>-labels-idx1-ubyte for
r = 0..TAU-1: contiguous, even chunks (sizes differ by at most one row) of the 60000 training
images, in file order. flynn's IDX loader finds each labels file beside its images file, so a
rank reads its shard with `--data OUT_DIR/shard_{rank}-images-idx3-ubyte`. Standard library
only (gzip, struct), so it runs with any Python 3.
"""
import gzip
import os
import struct
import sys


def read_idx(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        sys.exit(f"{path}: not a uint8 IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def write_idx(path, dims, payload):
    with open(path, "wb") as f:
        f.write(struct.pack(">HBB", 0, 0x08, len(dims)))
        f.write(struct.pack(">" + "I" * len(dims), *dims))
        f.write(payload)


def find(directory, stem):
    for name in (stem + ".gz", stem):
        p = os.path.join(directory, name)
        if os.path.exists(p):
            return p
    sys.exit(f"{directory}: no {stem}[.gz]")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    out, tau = sys.argv[1], int(sys.argv[2])
    src = sys.argv[3] if len(sys.argv) == 4 else "/usr/share/datasets/fashion-mnist"
    if tau < 1:
        sys.exit("TAU must be at least 1")
    (n, rows, cols), images = read_idx(find(src, "train-images-idx3-ubyte"))
    (n_labels,), labels = read_idx(find(src, "train-labels-idx1-ubyte"))
    if n != n_labels:
        sys.exit("images and labels disagree on the row count")
    os.makedirs(out, exist_ok=True)
    per = rows * cols
    start = 0
    for r in range(tau):
        size = n // tau + (1 if r < n % tau else 0)
        write_idx(os.path.join(out, f"shard_{r}-images-idx3-ubyte"), (size, rows, cols),
                  images[start * per:(start + size) * per])
        write_idx(os.path.join(out, f"shard_{r}-labels-idx1-ubyte"), (size,),
                  labels[start:start + size])
        start += size
    print(f"{tau} shards of Fashion-MNIST's {n} training rows in {out}")


if __name__ == "__main__":
    main()
