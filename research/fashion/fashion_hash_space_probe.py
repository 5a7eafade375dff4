#!/usr/bin/python3
"""Where Fashion-MNIST accuracy is lost (issue 20, research/defaults/history.md "Tenth round"): in the
FlyHash or in the per-class filters?

Protocol (selection only: the Fashion-MNIST test set is never read): the default model is
trained on the first 50000 training rows; the last 10000 training rows are the queries.
From the model's counts (export_counts) and the queries' hashes (FlyNNClassifier.hash) it
measures, on the same hashes:
  * filter scorings: every function of the per-class counts a Fly Bloom Filter could use
    at the same cost per query (γ^c absolute / relative for several γ, Bernoulli and
    multinomial naive Bayes over the units, a unit's share of the classes' evidence);
  * nearest neighbours in the hash's own space: the training rows sharing the most winners
    with the query (k = 1, 5, 10, 20): what the hash keeps of the neighbourhoods, before
    the filters sum each class's rows;
  * each class's sum over its rows of (shared winners)^p, p = 1, 2, 4, 6: what a model
    counting p-tuples of units per class could see at best (p = 1 is the filters' counts);
  * exact kNN on the pixels (L2-normalised rows), for reference;
  * min-hash bands (B bands of K min-hashes of the winner set): a count-based second-order
    structure (class counts per band bucket, added to the filter scores), the kind of
    locality a counting model could keep.

Usage: research/fashion/fashion_hash_space_probe.py [--out FILE.json] [--threads 2]
Needs the Python package (pip install .), scipy and dataset-fashion-mnist.
"""
import argparse
import json
import sys
import time

import numpy as np
import scipy.sparse as sp

import flynn
import os
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) for d in ("common", "defaults", "imbalanced", "pairs", "tuning")]  # research helpers
from fashion_data import N_SPLIT, fashion_rows
from filter_scores import relative_table, scores

N_TRAIN = N_SPLIT


def accuracy(table, winners, y, lower=True):
    """Accuracy of argmin (or argmax) over classes of Σ table[winner] (table: m × L)."""
    s = table[winners].sum(axis=1)
    return float(np.mean((s.argmin(1) if lower else s.argmax(1)) == y))


def filter_scorings(C, n, W, y):
    m = C.shape[1]
    out = {}
    for g in (0.5, 0.8, 0.9, 0.95):
        T = g ** C
        out[f"absolute gamma {g}"] = accuracy(T.T, W, y)
        out[f"relative gamma {g}"] = accuracy(relative_table(C, g).T, W, y)
        E = 1 - T
        out[f"unit share gamma {g}"] = accuracy((E / (E.sum(0, keepdims=True) + 1e-12)).T, W, y, lower=False)
    for a in (0.1, 1.0):
        P = (C + a) / (n[:, None] + 2 * a)
        s = (np.log(P) - np.log1p(-P)).T[W].sum(1) + np.log1p(-P).sum(1)
        out[f"Bernoulli naive Bayes alpha {a}"] = float(np.mean(s.argmax(1) == y))
        Pm = (C + a) / (C.sum(1, keepdims=True) + a * m)
        out[f"multinomial naive Bayes alpha {a}"] = accuracy(np.log(Pm).T, W, y, lower=False)
    return out


def indicator(W, m):
    rho = W.shape[1]
    return sp.csr_matrix((np.ones(W.size, np.float32), W.ravel().astype(np.int64),
                          np.arange(0, W.size + 1, rho)), shape=(W.shape[0], m))


def hash_space_knn(TW, ty, W, y, m, L, ks=(1, 5, 10, 20)):
    T = indicator(TW, m).T.tocsc()
    votes = {k: np.zeros((len(y), L)) for k in ks}
    powers = (1, 2, 4, 6)
    kernel = {p: np.zeros((len(y), L)) for p in powers}
    onehot = np.zeros((len(ty), L))
    onehot[np.arange(len(ty)), ty] = 1
    overlap_nn = []
    for start in range(0, len(y), 1000):
        O = (indicator(W[start:start + 1000], m) @ T).toarray()  # shared winners
        part = np.argpartition(-O, max(ks), axis=1)[:, :max(ks)]
        order = np.lexsort((part, -np.take_along_axis(O, part, 1)), axis=1)  # most shared first
        top = np.take_along_axis(part, order, 1)
        overlap_nn.append(O[np.arange(len(O)), top[:, 0]])
        for p in powers:  # Σ over each class's rows of (shared winners)^p
            kernel[p][start:start + len(O)] = (O.astype(np.float64) ** p) @ onehot
        for k in ks:
            for j in range(k):
                np.add.at(votes[k], (start + np.arange(len(O)), ty[top[:, j]]), 1)
    return ({f"k={k}": float(np.mean(votes[k].argmax(1) == y)) for k in ks},
            float(np.mean(np.concatenate(overlap_nn))),
            {f"p={p}": float(np.mean(kernel[p].argmax(1) == y)) for p in powers})


def minhash_bands(TW, ty, W, y, m, L, base_scores, bands=128, k=4, seed=1):
    rng = np.random.default_rng(seed)
    votes = np.zeros((len(y), L))
    for _ in range(bands):
        perms = [rng.permutation(m).astype(np.uint32) for _ in range(k)]

        def key(X):
            out = np.zeros(len(X), np.int64)
            for p in perms:
                out = out * m + X[np.arange(len(X)), p[X].argmin(1)]
            return out
        tk, qk = key(TW), key(W)
        u, inv = np.unique(np.concatenate([tk, qk]), return_inverse=True)
        cnt = np.zeros((len(u), L))
        np.add.at(cnt, (inv[:len(tk)], ty), 1)
        votes += cnt[inv[len(tk):]]
    out = {"votes alone": float(np.mean(votes.argmax(1) == y))}
    for lam in (0.5, 2, 8):
        out[f"relative filters - {lam}·log(1+votes)"] = float(
            np.mean((base_scores - lam * np.log1p(votes)).argmin(1) == y))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    X, labels = fashion_rows("train")
    Xtr, ytr, Xq, yq = X[:N_TRAIN], labels[:N_TRAIN], X[N_TRAIN:], labels[N_TRAIN:]
    t0 = time.time()
    clf = flynn.FlyNNClassifier(n_jobs=a.threads).fit(Xtr, ytr)
    counts, rows = clf._model.counts()
    C, n = counts.astype(np.float64), rows.astype(np.float64)
    m, rho, L = clf.config_["m"], clf.config_["rho"], len(clf.classes_)
    yi = np.searchsorted(clf.classes_, yq)
    tyi = np.searchsorted(clf.classes_, ytr)
    W, TW = clf.hash(Xq).astype(np.int64), clf.hash(Xtr).astype(np.int64)
    result = {"protocol": "train rows 0-49999, queries 50000-59999 of the training set; test set unread",
              "config": {k: clf.config_[k] for k in ("variant", "m", "s", "rho", "gamma", "filter_scoring")},
              "defaults (predict)": float(np.mean(clf.predict(Xq) == yq))}
    result["filter scorings"] = filter_scorings(C, n, W, yi)
    (result["hash-space kNN (shared winners)"], result["mean winners shared with the nearest row"],
     result["class sums of (shared winners)^p"]) = hash_space_knn(TW, tyi, W, yi, m, L)
    # For reference, exact kNN on the pixels (L2-normalised rows) on the same split.
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.preprocessing import normalize
    result["pixel kNN (L2-normalised rows)"] = {
        f"k={k}": float(KNeighborsClassifier(k, algorithm="brute", n_jobs=a.threads)
                        .fit(normalize(Xtr.astype(np.float32)), ytr)
                        .score(normalize(Xq.astype(np.float32)), yq)) for k in (1, 5, 10)}
    base = scores(relative_table(C, clf.config_["gamma"]), W)
    result["min-hash bands (128 bands of 4)"] = minhash_bands(TW, tyi, W, yi, m, L, base)
    result["seconds"] = round(time.time() - t0, 1)
    text = json.dumps(result, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
