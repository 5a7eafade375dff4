"""flynn.tune: FlyNN's hyper-parameter search (the one `flynn tune` runs) from Python."""
import numpy as np

from . import _flynn
from ._classifier import FlyNNClassifier, _class_weight_text, _label_names, _threads


class TuneSearch:
    """The outcome of ``flynn.tune``, shaped like scikit-learn's searches.

    Attributes
    ----------
    best_params_ : dict
        The chosen FlyNNClassifier parameters (m, s, rho, gamma, seed, preprocess, ...).
    best_score_ : float
        Their mean CV ``scoring`` metric (accuracy by default) on all rows; for "log_loss",
        minus the log-loss (scikit-learn's neg_log_loss: higher is better, as for every
        scoring).
    best_fold_scores_ : ndarray
        The ``scoring`` metric of each fold for ``best_params_`` (the same sign).
    best_accuracy_, best_balanced_accuracy_, best_macro_f1_ : float
        Every metric's mean for them.
    best_log_loss_ : float or None
        The out-of-fold log-loss of their calibrated probabilities (only with
        ``scoring="log_loss"``).
    kept_default_ : bool
        True when ``best_params_`` are the defaults' own configuration (what
        ``FlyNNClassifier()`` would fit), evaluated on the same folds and kept because no
        searched configuration scored higher (``cv_results_`` holds the searched ones only).
    chose_pairs_ : bool
        True when ``best_params_`` add second-order filters (pairs) to the configuration
        chosen before, which scored strictly higher with them on the same folds.
    chose_value_transform_ : bool
        True when ``best_params_`` transform the values (value_transform "log1p") of the
        configuration chosen before, which scored strictly higher so on the same folds
        (tried before pairs; standardising configurations only).
    best_estimator_ : FlyNNClassifier
        ``FlyNNClassifier(**best_params_)`` fitted on all rows with the calibrated
        ``temperature_`` (``refit=True``): the model ``flynn tune`` saves.
    temperature_ : float
        The probability temperature t fitted on the chosen configuration's out-of-fold
        scores (minimum log-loss), as ``flynn tune`` calibrates it.
    calibration_ : dict
        Its figures: "temperature", "out_of_fold_log_loss", "out_of_fold_ece",
        "heldout_log_loss", "heldout_ece" (cross-fitted), "default_temperature",
        "default_log_loss", "default_ece".
    cv_results_ : dict
        One entry per evaluated (hashing configuration, γ): "params", "param_<name>",
        "mean_test_score", "rank_test_score" (ranked among the full-data entries; subsample
        entries get rank 0), "n_rows" (rows the evaluation used: successive halving
        evaluates on subsamples first), "rung", "capped" (the guard lowered m), "seconds".
    n_splits_ : int
        CV folds.
    search_seconds_ : float
        Wall time of the search.
    time_limited_ : bool
        The time limit cut the search short.
    skipped_ : list of str
        The steps after the search left out to finish within ``time_limit``
        ("value_transform", "pairs", "calibration"); empty without a limit.
    """

    def __init__(self, raw, n_splits):
        self.n_splits_ = n_splits
        self.best_params_ = dict(raw["best_params"])
        self.kept_default_ = bool(raw["kept_default"])
        self.chose_pairs_ = bool(raw["chose_pairs"])
        self.chose_value_transform_ = bool(raw["chose_value_transform"])
        self.scoring = raw["scoring"]
        self.best_score_ = float(raw["best_score"])
        self.best_fold_scores_ = np.asarray(raw["best_fold_scores"])
        self.best_accuracy_ = float(raw["best_mean"])
        self.best_balanced_accuracy_ = float(raw["best_balanced_accuracy"])
        self.best_macro_f1_ = float(raw["best_macro_f1"])
        self.best_log_loss_ = float(raw["best_log_loss"]) if "best_log_loss" in raw else None
        self.search_seconds_ = float(raw["seconds"])
        self.time_limited_ = bool(raw["time_limited"])
        self.skipped_ = list(raw["skipped"])
        self.temperature_ = float(raw["temperature"])
        self.calibration_ = dict(raw["calibration"]) if raw["calibration"] is not None else None
        entries = []
        for t in raw["trace"]:
            for gamma, acc in zip(raw["gammas"], t["gamma_accuracy"]):
                entries.append((dict(t["params"], gamma=gamma), acc, t))
        full = [i for i, (_, _, t) in enumerate(entries) if t["rows"] == max(
            e[2]["rows"] for e in entries)]
        ranks = np.zeros(len(entries), dtype=np.int64)
        order = sorted(full, key=lambda i: -entries[i][1])
        for rank, i in enumerate(order, start=1):
            ranks[i] = rank
        results = {"params": [p for p, _, _ in entries],
                   "mean_test_score": np.array([a for _, a, _ in entries]),
                   "rank_test_score": ranks,
                   "n_rows": np.array([t["rows"] for _, _, t in entries]),
                   "rung": np.array([t["rung"] for _, _, t in entries]),
                   "capped": np.array([bool(t["cap_reason"]) for _, _, t in entries]),
                   "seconds": np.array([t["seconds"] for _, _, t in entries])}
        for name in ("m", "s", "rho", "gamma", "preprocess"):
            results[f"param_{name}"] = np.array([p[name] for p, _, _ in entries], dtype=object)
        self.cv_results_ = results

    def __repr__(self):
        return f"TuneSearch(best_params_={self.best_params_}, best_score_={self.best_score_:.4f})"


def tune(X, y, budget=60, cv=5, *, seed=0, fly_seed=None, time_limit=None, refit=True,
         n_jobs=None, scoring="accuracy", class_weight=None, missing="mean"):
    """Searches FlyNN's hyper-parameters for (X, y) by stratified cross-validation.

    The search ``flynn tune`` runs: successive halving over the paper's space (m in
    [2d, 2048d], s in [2, d/2], rho in [8, 256], gamma in {0, 0.1, ..., 0.8}, densify on or
    off) and the variants, then the calibration of the probability temperature on
    out-of-fold scores.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or DataFrame
        The rows, as FlyNNClassifier.fit takes them: a DataFrame may hold text columns
        (one-hot encoded) and missing values; ``best_estimator_`` then predicts DataFrames
        with the same columns. A scipy.sparse matrix is refused (the search needs dense
        rows).
    y : array-like of shape (n_samples,)
        Their labels.
    budget : int, default 60
        Full-data-equivalent evaluations.
    cv : int, default 5
        Stratified folds.
    seed : int, default 0
        Seed of the folds and the design: the search is deterministic given it and
        ``fly_seed``.
    fly_seed : int, optional
        Seed of the lifting matrix; flynn's default when None.
    time_limit : float, optional
        Seconds that bound the whole call, refit included, as ``flynn tune --time-limit``:
        the search stops early and the steps after it (extensions, calibration) are left out
        when they would not fit (``skipped_``).
    refit : bool, default True
        Fit ``best_estimator_`` on all rows.
    n_jobs : int, optional
        Threads; never changes results.
    scoring : {"accuracy", "balanced_accuracy", "macro_f1", "log_loss"}, default "accuracy"
        What the search maximises ("log_loss" is minimised: the out-of-fold log-loss of
        each candidate's calibrated probabilities; ``flynn tune --metric``).
    class_weight : None, "balanced" or dict, optional
        Given to every candidate and to the refitted model, as FlyNNClassifier's.
    missing : {"mean", "zero", "error"}, default "mean"
        How missing values are filled, as FlyNNClassifier's.

    Returns
    -------
    TuneSearch
    """
    if not hasattr(_flynn, "tune"):
        raise RuntimeError("this flynn module was built without the evaluation layer "
                           "(FLYNN_PYTHON_TUNE=0); reinstall with it to use flynn.tune")
    template = FlyNNClassifier(n_jobs=n_jobs, missing=missing)
    # The rows as fit sees them: DataFrames and missing values through the table encoder.
    X, y, schema = template._training_rows(X, y, reset=True, label_name=template._label_name_of(y))
    if not isinstance(X, np.ndarray):
        raise ValueError("flynn.tune needs dense rows (a scipy.sparse X is not supported)")
    classes, ids = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError("tune needs at least two classes, but y has only one class")
    default_seed = _flynn.HyperParams().resolve(X.shape[1])["seed"]
    raw = _flynn.tune(X, ids.astype(np.uint32), _label_names(classes), int(budget), int(cv),
                      int(seed), int(seed), int(default_seed if fly_seed is None else fly_seed),
                      float(time_limit or 0.0), bool(refit), _threads(n_jobs), str(scoring),
                      _class_weight_text(class_weight) or "none")
    search = TuneSearch(raw, int(cv))
    if refit:
        model = raw["model"]
        if schema is not None and not schema.empty:
            model.table_schema = schema  # as fit stores it: the columns, categories, fill values
        search.best_estimator_ = FlyNNClassifier._from_model(model, n_jobs, classes=classes)
        search.best_estimator_.missing = missing
    return search
