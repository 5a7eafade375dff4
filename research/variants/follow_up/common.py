"""Shared helpers of the issue-9 second-round studies (research/defaults/history.md, "Second round").

Data: the OpenML sets of ../shared/data/openml (gzip CSV, class last) by did, or
scikit-learn's bundled iris, wine, breast_cancer, digits by name. CV: 5-fold
StratifiedKFold(shuffle, seed 0). Models: the flynn Python package (build it as
docs/guide/python.md says, or put build/python on PYTHONPATH).
A paper-half variant is emulated by two models, the first variant with m/2 units and ρ/2
winners and the paper's method with the rest, whose scores are summed: exactly the
variant's scores except that both halves here share the lifting seed.
"""
import glob
import gzip
import os
import sys

import numpy as np
from sklearn import datasets
from sklearn.model_selection import StratifiedKFold

import flynn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "common"))
from heldout_split import split  # noqa: E402

DATA = os.environ.get("FLYNN_OPENML_DIR", os.path.join(HERE, "..", "..", "..", "..", "shared", "data", "openml"))


def load(name):
    if name in ("iris", "wine", "breast_cancer", "digits"):
        d = getattr(datasets, "load_" + name)()
        return d.data.astype(np.float32), d.target
    path = glob.glob(os.path.join(DATA, f"{name}_*"))[0]
    a = np.loadtxt(gzip.open(path, "rt"), delimiter=",", skiprows=1, dtype=str)
    _, y = np.unique(a[:, -1], return_inverse=True)
    return a[:, :-1].astype(np.float32), y


def half_names(half):
    return [did for did, _, h in split(os.path.join(DATA, "MANIFEST.tsv")) if h == half]


def default_m(d):
    return int(min(max(256 * d, 4096), 131072))


def cv(X, y, predict, k=5):
    acc = []
    for tr, te in StratifiedKFold(k, shuffle=True, random_state=0).split(X, y):
        acc.append(np.mean(predict(X[tr], y[tr], X[te]) == y[te]))
    return float(np.mean(acc))


def summed(parts):
    """A predictor from models whose scores are summed: parts = [(variant, params), …]."""
    def predict(Xt, yt, Xe):
        total = 0
        for variant, params in parts:
            c = flynn.FlyNNClassifier(variant=variant, **params).fit(Xt, yt)
            total = total + c.scores(Xe)
        return c.classes_[np.argmin(total, 1)]
    return predict


def paper_half(first, m, rho=64, **params):
    return [(first, dict(m=m // 2, rho=rho // 2, **params)),
            ("paper", dict(m=m - m // 2, rho=rho - rho // 2, **params))]
