"""Shared fixtures of the Python package's tests (run by scripts/test.sh's python stage)."""
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
DIGITS = Path("/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz")


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def cli():
    """The flynn CLI of this checkout ($FLYNN_CLI or build/flynn). Tests that compare with
    it are skipped without one, unless FLYNN_REQUIRE_CLI=1 (scripts/test.sh), which makes
    a missing CLI a failure."""
    path = os.environ.get("FLYNN_CLI") or str(REPO / "build" / "flynn")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        found = shutil.which("flynn")
        if found:
            path = found
        elif os.environ.get("FLYNN_REQUIRE_CLI") == "1":
            pytest.fail(f"the flynn CLI is required (FLYNN_REQUIRE_CLI=1) but {path} is missing")
        else:
            pytest.skip(f"no flynn CLI at {path} (build it, or set FLYNN_CLI)")
    return path


@pytest.fixture(scope="session")
def digits():
    """scikit-learn's digits (1797 × 64 pixels 0..16, labels 0..9), as float64 and int."""
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    return X, y


@pytest.fixture(scope="session")
def digits_split(digits):
    X, y = digits
    return X[:1400], y[:1400], X[1400:], y[1400:]


@pytest.fixture()
def small_params():
    """Hyper-parameters that keep tests fast (m = 2048) while every code path runs."""
    return dict(m=2048, s=12, rho=32, gamma=0.7, seed=11)


def same_counts(a, b):
    """Whether two fitted estimators hold the same model but for its calibration: the same
    configuration, classes and counts. The model algebra (partial_fit, merge, forget,
    from_counts) is exact on those; the calibration is fitted by fit() on its rows' leave-one-
    out scores, and an edit keeps the edited model's (docs/guide/probabilities.md)."""
    ca, ra = a._model.counts()
    cb, rb = b._model.counts()
    return (a._model.config == b._model.config and list(a.classes_) == list(b.classes_)
            and np.array_equal(ca, cb) and np.array_equal(ra, rb))


def probabilities_of(scores, rows, rho, calibration):
    """predict_proba recomputed from the scores: softmax(-score / (rho * t)) mixed with the
    class frequencies (n_l + 1) / (n + L) at the calibration's prior weight w."""
    t, w = calibration["temperature"], calibration["prior_weight"]
    e = np.exp(-(scores - scores.min(axis=1, keepdims=True)) / (rho * t))
    q = e / e.sum(axis=1, keepdims=True)
    priors = (rows + 1.0) / (rows.sum() + len(rows))
    return (1 - w) * q + w * priors
