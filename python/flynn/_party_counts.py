"""The party-level federated API's data (PartyCounts, DpRelease) and its aggregation into a
model, below both FlyNNClassifier (export_counts, from_counts) and flynn.federated (which
re-exports them), so that neither module imports the other."""
from dataclasses import dataclass

import numpy as np

from . import _flynn

FederationError = _flynn.FederationError


@dataclass
class PartyCounts:
    """One party's exact counts (what FlyNNClassifier.export_counts returns)."""
    config: dict                 #: resolved hyper-parameters (n_features, m, s, rho, gamma, seed, preprocess, variant)
    classes: np.ndarray          #: the agreed, sorted class labels
    counts: np.ndarray           #: (len(classes), m) uint32: rows of each class with each unit set
    rows_per_class: np.ndarray   #: (len(classes),) uint64: training rows per class

    def privatize(self, epsilon, T, parties, exponent="paper", unit="paper"):
        """The differentially private release of these counts.

        T entries chosen by the exponential mechanism with discrete Laplace noise. Noise
        comes from the operating system's secure generator, never from a seed.

        Parameters
        ----------
        epsilon : float
            The federation's total budget ε.
        T : int
            Entries released.
        parties : int
            Parties τ sharing the budget.
        exponent : {"paper", "reference"}, default "paper"
            The exponential mechanism's exponent (the paper's, or the reference code's
            sharper one).
        unit : {"paper", "record"}, default "paper"
            The privacy unit, as simulate's ``dp_unit``: "paper" spends ε' = epsilon/parties
            of the total budget; "record" (each record lives at one party) spends epsilon at
            each party.

        Returns
        -------
        DpRelease
        """
        index, value = _flynn.federated.privatize(self.counts, float(epsilon), int(T),
                                                  int(parties), exponent, unit)
        return DpRelease(config=dict(self.config), classes=self.classes.copy(), index=index,
                         value=value, epsilon=float(epsilon), T=int(T), parties=int(parties),
                         exponent=exponent, unit=unit)


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
    exponent: str        #: "paper" or "reference": the exponential mechanism's exponent
    unit: str = "paper"  #: the privacy unit: "paper" or "record"


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


def aggregate_model(parts, label_names, threads):
    """The federation's _flynn.Model from every party's PartyCounts (their exact sum,
    through the C++ federation's checks: the model trained on all rows) or DpRelease
    (their sum, marked as a DP release with the budget). Raises FederationError when the
    parties' configurations, classes or counts disagree."""
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
    model = _flynn.Model(hyper, c["n_features"], label_names, threads)
    shape = (len(first.classes), model.count_cells)
    if isinstance(first, PartyCounts):
        counts, rows = _flynn.federated.aggregate_counts(
            [(p.counts, p.rows_per_class) for p in parts], label_names, model.count_cells, model.codes_per_row)
        model.set_counts(counts, rows, _flynn.Provenance())
    else:
        for p in parts:
            if (p.epsilon, p.T, p.parties, p.exponent, p.unit) != (
                    first.epsilon, first.T, first.parties, first.exponent, first.unit):
                raise FederationError("the parties' DP settings (epsilon, T, parties, exponent, "
                                      "unit) differ")
        if len(parts) > first.parties:
            raise FederationError(f"{len(parts)} releases from a federation of {first.parties} "
                                  "parties: the budget would be exceeded")
        dense = _flynn.federated.sum_releases([(p.index, p.value) for p in parts],
                                              shape[0] * shape[1])
        model.set_counts(dense.reshape(shape), np.zeros(shape[0], dtype=np.uint64),
                         _flynn.Provenance(True, first.epsilon, first.T, first.parties))
    return model
