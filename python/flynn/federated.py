"""Federated FlyNN (FlyNNFL, Ram & Sinha, AAAI 2022) from Python.

Two ways in:

* ``simulate(X, y, parties=4, split="iid")`` runs the whole protocol of
  ``flynn federated simulate``: the rows are split among parties that train on threads of
  this process and aggregate their counts (optionally as differentially private releases).
* The party-level API, for a real federation over any transport: each party fits a
  FlyNNClassifier on its own rows with the agreed hyper-parameters (the same seed!) and
  classes, and sends ``clf.export_counts()`` (exact counts) or
  ``clf.export_counts().privatize(epsilon, T, parties, unit=...)`` (a DP release: T noisy
  entries; ``unit`` as simulate's ``dp_unit``);
  the aggregator calls ``FlyNNClassifier.from_counts(parts)``. Without DP the aggregate is
  exactly the model trained on all rows (the same model file bytes).

PartyCounts and DpRelease are plain dataclasses of numpy arrays and built-in values:
pickle them, or send their fields (``dataclasses.asdict``) in any format.
"""
import numpy as np

from . import _flynn
from ._classifier import FlyNNClassifier, _class_weight_text, _label_names, _threads
from ._party_counts import DpRelease, FederationError, PartyCounts

__all__ = ["simulate", "PartyCounts", "DpRelease", "aggregate", "FederationError"]


def aggregate(parts, n_jobs=None):
    """The federation's model from every party's counts; the same as
    ``FlyNNClassifier.from_counts``.

    Parameters
    ----------
    parts : iterable of PartyCounts or DpRelease
        Every party's PartyCounts (their exact sum is the model trained on all rows, checked
        as the C++ federation checks it: row totals, every count within its class's rows,
        rows × rho ones per class) or DpRelease (their sum, marked as a DP release with the
        budget).
    n_jobs : int, optional
        Threads for prediction.

    Returns
    -------
    FlyNNClassifier

    Raises
    ------
    FederationError
        When the parties' configurations, classes or counts disagree.
    """
    return FlyNNClassifier.from_counts(parts, n_jobs=n_jobs)


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


# simulate's DP keywords: the rows of the library's DP settings table
# (flynn/federated/dp_settings.hpp), as the CLI's --dp-* flags are; a row added there is a
# keyword here, with its help in simulate's documentation.
_DP_FIELDS = tuple(_flynn.federated.dp_param_fields())

# simulate's hyper-parameter keywords: the rows of the library's table of settings
# (include/flynn/settings_table.hpp), as fit_file's and the CLI's flags are; a row added
# there is a keyword here. FlyNNClassifier's parameters that are not agreed settings of a
# federation are refused by name: auto (a search on rows no single party holds), missing
# and label_name (how a party reads its own table).
_HYPER_KEYWORDS = tuple(_flynn.hyper_param_names())
_NOT_AGREED_SETTINGS = ("auto", "missing", "label_name")


def simulate(X, y, parties=2, split="iid", *, split_seed=0, feature_stats=None, X_test=None, y_test=None,
             n_jobs=None, **settings):
    """Simulates FlyNNFL on (X, y), exactly the protocol of ``flynn federated simulate``.

    The rows are split among ``parties`` parties, each party trains on its own thread with
    the agreed hyper-parameters, and the parties aggregate their counts (with dp_epsilon and
    dp_T: differentially private releases of T entries per party, total budget dp_epsilon).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The rows of every party together.
    y : array-like of shape (n_samples,)
        Their labels.
    parties : int, default 2
        The number of parties τ.
    split : str, default "iid"
        How the rows are dealt: "iid", "by-class", "dirichlet:ALPHA" or
        "sizes:W1,W2,..." (deterministic given ``split_seed``).
    split_seed : int, default 0
        Seed of the split.
    feature_stats : (centres, scales), optional
        Public standardisation statistics, one value per feature (``--feature-stats``):
        the parties then exchange no statistic of their rows, which a standardising
        ``variant`` needs under DP (without DP and without a variant, the default variant
        applies; with DP and no variant, the paper's).
    X_test, y_test : array-like, optional
        Held-out rows and their labels for the federated evaluation (``--test``): they are
        dealt among the parties (at random, stratified), each party scores its own with the
        federation's model, and the parties sum their confusion matrices, so every party
        learns the federation's accuracy, balanced accuracy and confusion matrix and no
        other party's. In ``federation_report_["federation_test"]``; equal to the model's
        figures on the pooled rows.
    n_jobs : int, optional
        Threads in all; never changes results.
    **settings
        The hyper-parameters, by the names of the library's table of settings, as
        ``fit_file``'s keywords and the CLI's flags (m, expansion_factor, s,
        connection_sparsity, rho, wta_ratio, wta_nnz, gamma, seed, preprocess, variant,
        class_weight (a dict {label: weight} too), filter_scoring, pairs,
        paper_half_min_columns, value_transform; None = the default), and the DP settings
        (below). ``auto`` is not one: the parties agree on settings before a row is
        counted, so choose with ``FlyNNClassifier(auto=True)`` on rows you hold and pass its
        ``config_``.

    Returns
    -------
    FlyNNClassifier
        The aggregated, fitted model; its ``federation_report_`` dict gives the rows of
        each party, the seed, and with DP the privacy accounting (Theorem 6) and every DP
        setting used (``["privacy"]["settings"]``). Without DP the model equals
        ``FlyNNClassifier(...).fit(X, y)`` for any split (with feature_stats: the central
        model trained with the same statistics).

    Other Parameters
    ----------------
"""
    for name in _NOT_AGREED_SETTINGS:
        if name in settings:
            raise TypeError(f"simulate() got {name}=: not a setting the parties agree on "
                            f"(the agreed settings are {', '.join(_HYPER_KEYWORDS)})")
    hyper = {k: settings.pop(k) for k in _HYPER_KEYWORDS if k in settings}
    if "class_weight" in hyper:
        hyper["class_weight"] = _class_weight_text(hyper["class_weight"])
    hyper = _flynn.HyperParams(**{k: v for k, v in hyper.items() if v is not None})
    dp = settings
    template = FlyNNClassifier(n_jobs=n_jobs)  # reads X and y as fit does
    X, y = template._check_Xy(X, y, reset=True)
    classes, ids = np.unique(y, return_inverse=True)
    test = {}
    if (X_test is None) != (y_test is None):
        raise ValueError("X_test and y_test go together")
    if X_test is not None:
        X_test, y_test = template._check_Xy(X_test, y_test, reset=False)
        y_test = np.asarray(y_test)
        unknown = sorted(set(np.unique(y_test).tolist()) - set(classes.tolist()), key=str)
        if unknown:
            raise ValueError(f"y_test has labels that y has not: {unknown[:5]}")
        test = {"X_test": X_test, "y_test": np.searchsorted(classes, y_test).astype(np.uint32)}
    model, report = _flynn.federated.simulate(
        X, ids.astype(np.uint32), _label_names(classes), hyper, int(parties),
        split, int(split_seed), dp, *_feature_stats_pair(feature_stats, X.shape[1]),
        _threads(n_jobs), **test)
    clf = FlyNNClassifier._from_model(model, n_jobs, classes=classes)
    if hasattr(template, "feature_names_in_"):
        clf.feature_names_in_ = template.feature_names_in_
    clf.federation_report_ = report
    return clf


def _rst_text(text):
    """Help text as reStructuredText reads it literally (a '*' would start emphasis)."""
    return text.replace("*", "\\*")


# The DP keywords' documentation, from the same table: as the CLI's --dp-* flags, dp_epsilon
# and dp_T go together, and the others need them.
def _dp_kind(row):
    """A DP row's kind as the docstring says it (dp_T is a count or "auto")."""
    return 'unsigned integer or "auto"' if row["name"] == "dp_T" else row["kind"]


simulate.__doc__ += "".join(f"    {row['name']} : {_dp_kind(row)}\n        {_rst_text(row['help'])}.\n"
                            for row in _DP_FIELDS)
