"""Federated FlyNN (FlyNNFL, Ram & Sinha, AAAI 2022) from Python.

Two ways in:

* ``simulate(X, y, parties=4, split="iid")`` runs the whole protocol of
  ``flynn federated simulate``: the rows are split among parties that train on threads of
  this process and aggregate their counts (optionally as differentially private releases).
* The party-level API, for a real federation over any transport: each party fits a
  FlyNNClassifier on its own rows with the agreed hyper-parameters (the same seed!) and
  classes, and sends ``clf.export_counts()`` (exact counts) or
  ``clf.export_counts().privatize(epsilon, T, parties)`` (a DP release: T noisy entries);
  the aggregator calls ``FlyNNClassifier.from_counts(parts)``. Without DP the aggregate is
  exactly the model trained on all rows (the same model file bytes).

PartyCounts and DpRelease are plain dataclasses of numpy arrays and built-in values:
pickle them, or send their fields (``dataclasses.asdict``) in any format.
"""
from dataclasses import dataclass

import numpy as np

from . import _flynn
from ._classifier import FlyNNClassifier, _label_names, _threads

__all__ = ["simulate", "PartyCounts", "DpRelease", "aggregate", "FederationError"]

FederationError = _flynn.FederationError


@dataclass
class PartyCounts:
    """One party's exact counts (what FlyNNClassifier.export_counts returns)."""
    config: dict                 #: resolved hyper-parameters (n_features, m, s, rho, gamma, seed, preprocess, variant)
    classes: np.ndarray          #: the agreed, sorted class labels
    counts: np.ndarray           #: (len(classes), m) uint32: rows of each class with each unit set
    rows_per_class: np.ndarray   #: (len(classes),) uint64: training rows per class

    def privatize(self, epsilon, T, parties, exponent="paper"):
        """The differentially private release of these counts (spec section 5): T entries
        chosen by the exponential mechanism with discrete Laplace noise, spending
        ε' = epsilon/parties of the federation's total budget epsilon. Noise comes from
        the operating system's secure generator, never from a seed."""
        index, value = _flynn.federated.privatize(self.counts, float(epsilon), int(T),
                                                  int(parties), exponent)
        return DpRelease(config=dict(self.config), classes=self.classes.copy(), index=index,
                         value=value, epsilon=float(epsilon), T=int(T), parties=int(parties),
                         exponent=exponent)


@dataclass
class DpRelease:
    """One party's differentially private release of its counts."""
    config: dict         #: resolved hyper-parameters, as in PartyCounts
    classes: np.ndarray  #: the agreed, sorted class labels
    index: np.ndarray    #: (T,) uint32 indices into the class-major (classes × m) counts
    value: np.ndarray    #: (T,) uint32 noisy counts at those indices
    epsilon: float       #: the federation's total budget ε
    T: int               #: entries released per party
    parties: int         #: parties τ sharing ε
    exponent: str        #: "paper" or "reference" (see docs/federated.md)


def _check_agree(parts):
    first = parts[0]
    for i, p in enumerate(parts[1:], start=1):
        for key in first.config:
            if first.config[key] != p.config.get(key):
                raise FederationError(f"party {i}'s {key} = {p.config.get(key)!r} differs from "
                                      f"party 0's {first.config[key]!r}")
        if not np.array_equal(first.classes, p.classes):
            raise FederationError(f"party {i}'s classes {list(p.classes)!r} differ from party "
                                  f"0's {list(first.classes)!r}")
        if type(p) is not type(first):
            raise FederationError(f"party {i} sent a {type(p).__name__}, party 0 a "
                                  f"{type(first).__name__}: do not mix exact and DP counts")


def aggregate(parts, n_jobs=None):
    """The federation's model from every party's PartyCounts (their exact sum: the model
    trained on all rows) or DpRelease (their sum, marked as a DP release with the budget).
    Raises FederationError when the parties' configurations or classes differ."""
    parts = list(parts)
    if not parts:
        raise ValueError("aggregate needs at least one party's counts")
    _check_agree(parts)
    first = parts[0]
    c = first.config
    if c.get("variant", "paper") not in ("paper", "sign"):
        raise FederationError(
            f"variant {c['variant']!r} standardises features with training statistics, which "
            "the party-level counts API does not carry yet: use variant='paper' or 'sign' for "
            "export_counts/aggregate, or flynn.federated.simulate, which agrees on the "
            "statistics with an exact all-reduce")
    # Every resolved field but n_features (the table of settings' estimator parameters,
    # config_dict.cpp) is a keyword of HyperParams: a field added to the table and not to
    # HyperParams fails here, in the tests, instead of being dropped.
    hyper = _flynn.HyperParams(**{k: v for k, v in c.items() if k != "n_features"})
    model = _flynn.Model(hyper, c["n_features"], _label_names(first.classes), _threads(n_jobs))
    shape = (len(first.classes), c["m"])
    if isinstance(first, PartyCounts):
        total = np.zeros(shape, dtype=np.uint64)
        rows = np.zeros(len(first.classes), dtype=np.uint64)
        for p in parts:
            total += np.asarray(p.counts, dtype=np.uint64).reshape(shape)
            rows += np.asarray(p.rows_per_class, dtype=np.uint64)
        if total.size and total.max() > np.iinfo(np.uint32).max:
            raise FederationError("aggregated counts exceed 2^32 - 1")
        model.set_counts(total.astype(np.uint32), rows, _flynn.Provenance())
    else:
        for p in parts:
            if (p.epsilon, p.T, p.parties, p.exponent) != (first.epsilon, first.T,
                                                           first.parties, first.exponent):
                raise FederationError("the parties' DP settings (epsilon, T, parties, exponent) "
                                      "differ")
        if len(parts) > first.parties:
            raise FederationError(f"{len(parts)} releases, but each spent epsilon/"
                                  f"{first.parties}: the budget would be exceeded")
        dense = _flynn.federated.sum_releases([(p.index, p.value) for p in parts],
                                              shape[0] * shape[1])
        model.set_counts(dense.reshape(shape), np.zeros(shape[0], dtype=np.uint64),
                         _flynn.Provenance(True, first.epsilon, first.T, first.parties))
    return FlyNNClassifier._from_model(model, n_jobs, classes=first.classes.copy())


def _feature_stats_pair(feature_stats, n_features):
    """(centres, scales) as two float32 lists of n_features values, or (None, None)."""
    if feature_stats is None:
        return None, None
    try:
        centres, scales = feature_stats
    except (TypeError, ValueError):
        raise ValueError("feature_stats must be a pair (centres, scales)") from None
    centres = np.asarray(centres, dtype=np.float32).ravel()
    scales = np.asarray(scales, dtype=np.float32).ravel()
    if centres.shape != (n_features,) or scales.shape != (n_features,):
        raise ValueError(f"feature_stats: expected {n_features} centres and {n_features} scales, "
                         f"got {centres.size} and {scales.size}")
    return centres.tolist(), scales.tolist()


def simulate(X, y, parties=2, split="iid", dp_epsilon=None, dp_T=None, *, split_seed=0,
             dp_exponent="paper", dp_unit="paper", dp_postprocess="noise-units",
             feature_stats=None, m=None, s=None, rho=None, gamma=None, seed=None,
             preprocess=None, variant=None, n_jobs=None):
    """Simulates FlyNNFL on (X, y): the rows are split among ``parties`` parties
    ("iid", "by-class", "dirichlet:ALPHA" or "sizes:W1,W2,..."; deterministic given
    split_seed), each party trains on its own thread with the agreed hyper-parameters and
    the parties aggregate their counts (with dp_epsilon and dp_T: differentially private
    releases of T entries per party, total budget dp_epsilon). Exactly the protocol of
    ``flynn federated simulate``.

    dp_unit ("paper": each party spends dp_epsilon/parties; "record": each record lives at
    one party, each spends dp_epsilon) and dp_postprocess ("noise-units", the CLI's default,
    "none", "threshold", "class-balance", "noise-units+class-balance") are the CLI's
    --dp-unit and --dp-postprocess (docs/federated.md). feature_stats = (centres, scales),
    one value per feature, are public standardisation statistics (--feature-stats): the
    parties then exchange no statistic of their rows, which a standardising ``variant``
    needs under DP (without DP and without a variant, the default variant applies; with DP
    and no variant, the paper's).

    Returns the aggregated, fitted FlyNNClassifier; its ``federation_report_`` dict gives
    the rows of each party, the seed, and with DP the privacy accounting (Theorem 6).
    Without DP the model equals ``FlyNNClassifier(...).fit(X, y)`` for any split (with
    feature_stats: the central model trained with the same statistics)."""
    template = FlyNNClassifier(m=m, s=s, rho=rho, gamma=gamma, seed=seed,
                               preprocess=preprocess, variant=variant, n_jobs=n_jobs)
    X, y = template._check_Xy(X, y, reset=True)
    classes, ids = np.unique(y, return_inverse=True)
    model, report = _flynn.federated.simulate(
        X, ids.astype(np.uint32), _label_names(classes), template._hyper(), int(parties),
        split, int(split_seed), dp_epsilon, dp_T, dp_exponent, dp_unit, dp_postprocess,
        *_feature_stats_pair(feature_stats, X.shape[1]), _threads(n_jobs))
    clf = FlyNNClassifier._from_model(model, n_jobs, classes=classes)
    if hasattr(template, "feature_names_in_"):
        clf.feature_names_in_ = template.feature_names_in_
    clf.federation_report_ = report
    return clf
