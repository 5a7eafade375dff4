"""Fashion-MNIST for the scripts (Debian's dataset-fashion-mnist): one reader of its IDX files.

fashion_rows("train") gives the 60000 training images (n × 784 uint8) and labels (int64);
fashion_rows("t10k") the 10000 test images, which the probes read only in their held-out
modes. The selection split the studies use: training rows 0–49999 / 50000–59999.
"""
import gzip

import numpy as np

FASHION = "/usr/share/datasets/fashion-mnist"
N_SPLIT = 50000


def fashion_rows(part):
    """Fashion-MNIST's "train" or "t10k" images (n × 784 bytes) and labels."""
    def idx(name, offset):
        with gzip.open(f"{FASHION}/{part}-{name}", "rb") as f:
            return np.frombuffer(f.read(), np.uint8, offset=offset)
    return idx("images-idx3-ubyte.gz", 16).reshape(-1, 784), idx("labels-idx1-ubyte.gz", 8).astype(np.int64)
