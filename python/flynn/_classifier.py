"""FlyNNClassifier: the scikit-learn estimator over flynn's core (flynn._flynn.Model)."""
import os

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _flynn
from ._sparse import ACCEPT_SPARSE, core_rows

# Element types the core reads without converting (float32 and uint8 rows in C order are
# not even copied); anything else is converted to the first one by scikit-learn's check_array.
_DTYPES = [np.float32, np.float64, np.uint8]


def _threads(n_jobs):
    """flynn's thread count for scikit-learn's n_jobs: None or -1 = all cores (0),
    k > 0 = k threads, -2 = all but one, ...; results never depend on it."""
    if n_jobs is None:
        return 0
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs = 0: give a positive thread count, or None / -1 for all cores")
    if n_jobs > 0:
        return n_jobs
    return max(1, (os.cpu_count() or 1) + 1 + n_jobs)


def _label_names(classes):
    """The names a model file stores for the classes (str of each value)."""
    names = [str(c) for c in classes]
    if len(set(names)) != len(names):
        raise ValueError(f"class labels {list(classes)!r} are not distinct as text; "
                         "flynn stores class names as strings")
    return names


def _classes_from_names(names):
    """classes_ of a model read from a file: integers when every name is one, else str."""
    try:
        ints = [int(n) for n in names]
        if [str(i) for i in ints] == list(names):
            return np.asarray(ints, dtype=np.int64)
    except ValueError:
        pass
    return np.asarray(names, dtype=object)


def _class_ids(y, classes):
    """Ids of the labels y in classes (a sorted array); ValueError naming an unknown one."""
    ids = np.searchsorted(classes, y)
    ids = np.minimum(ids, len(classes) - 1)
    unknown = classes[ids] != y
    if np.any(unknown):
        bad = y[np.argmax(unknown)]
        raise ValueError(f"label {bad!r} is not one of the model's classes {list(classes)!r}")
    return ids.astype(np.uint32)


class FlyNNClassifier(ClassifierMixin, BaseEstimator):
    """FlyNN: a nearest-neighbour classifier with one Fly Bloom Filter per class over
    FlyHash codes (Ram & Sinha, AAAI 2022), trained by exact integer counting.

    Parameters (None = flynn's default, the one ``flynn train`` uses):
      m:          FlyHash dimensionality (default 256·d clamped to [4096, 131072]).
      s:          ones per row of the lifting matrix (default max(2, ⌊0.3·d⌋), at most 128).
      rho:        winners per hash ρ (default 64).
      gamma:      filter decay γ in [0, 1) (default 0.8; 0 = binary filters).
      seed:       seed of the lifting matrix (default 5489): same seed, same model bytes.
      preprocess: "normalize" (default: unit L2 norm), "none" or "densify".
      variant:    the method: "zsign-q+paper" (default: half the units hash standardised
                  features from the training rows' exact statistics with signed lifting
                  rows and quantised rows, half the raw row as the paper does;
                  "thermo-sign" with ρ = m/4 for at most 4 features), "paper"
                  (the paper's exact FlyNN), "sign", "z", "zsign", "zsign-q", "thermo",
                  "thermo-sign", "zsign+paper" (docs/defaults.md). Standardising variants fix their statistics at the
                  first fit, so merge() needs models trained with the same statistics.
      n_jobs:     threads for fit and predict; None or -1 = all cores. Never changes results.

    Attributes after fit: classes_ (sorted labels), n_features_in_, feature_names_in_ (when
    X is a pandas DataFrame with string column names), config_ (the resolved
    hyper-parameters as a dict).

    Scores are Σ γ^count over the ρ winners of a row's hash, per class; lower = more
    familiar. predict returns the class of the lowest score (ties to the first class),
    predict_proba calibrated probabilities (prior-weighted softmax(−score/(ρ·t))),
    decision_function −score (binary: score of
    classes_[0] − score of classes_[1], > 0 for classes_[1]).
    """

    def __init__(self, m=None, s=None, rho=None, gamma=None, seed=None, preprocess=None,
                 variant=None, n_jobs=None):
        self.m = m
        self.s = s
        self.rho = rho
        self.gamma = gamma
        self.seed = seed
        self.preprocess = preprocess
        self.variant = variant
        self.n_jobs = n_jobs

    # ---- training

    def _hyper(self):
        return _flynn.HyperParams(m=self.m, s=self.s, rho=self.rho, gamma=self.gamma,
                                  seed=self.seed, preprocess=self.preprocess,
                                  variant=self.variant)

    def _new_model(self, classes, n_features):
        self._model = _flynn.Model(self._hyper(), n_features, _label_names(classes),
                                   _threads(self.n_jobs))
        self.classes_ = classes
        self.config_ = self._model.config

    def _check_Xy(self, X, y, reset):
        X, y = self._validate_data(X, y, reset=reset, dtype=_DTYPES, order=None,
                                   accept_sparse=ACCEPT_SPARSE)
        check_classification_targets(y)
        return core_rows(X), y

    def fit(self, X, y):
        """Learns the rows of X (n × d) with labels y; forgets earlier training."""
        X, y = self._check_Xy(X, y, reset=True)
        classes, ids = np.unique(y, return_inverse=True)
        if len(classes) < 2:
            raise ValueError("FlyNNClassifier needs at least two classes to train, but y has "
                             "only one class")
        self._new_model(classes, X.shape[1])
        self._model.fit(X, ids.astype(np.uint32))
        return self

    def partial_fit(self, X, y, classes=None):
        """Learns the rows of X on top of what the model holds (exactly: fit on A then
        partial_fit on B equals fit on A ∪ B). ``classes`` (all labels that will ever occur)
        is needed on the first call unless y already holds every class."""
        first_call = not hasattr(self, "_model")
        X, y = self._check_Xy(X, y, reset=first_call)
        if first_call:
            all_classes = np.unique(y if classes is None else np.asarray(classes))
            self._new_model(all_classes, X.shape[1])
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"classes={list(classes)!r} differ from the classes of the first "
                             f"partial_fit call {list(self.classes_)!r}")
        self._model.threads = _threads(self.n_jobs)
        self._model.partial_fit(X, _class_ids(y, self.classes_))
        return self

    def forget(self, X, y):
        """Removes rows learned before: afterwards the model equals one trained without them.
        Raises ValueError (model unchanged) when a row cannot have been learned, or when the
        model's counts are a differentially private release."""
        check_is_fitted(self)
        X, y = self._check_Xy(X, y, reset=False)
        self._model.threads = _threads(self.n_jobs)
        self._model.forget(X, _class_ids(y, self.classes_))
        return self

    def merge(self, other):
        """Adds the counts of another FlyNNClassifier with the same configuration and
        classes: the result equals training on both models' rows."""
        check_is_fitted(self)
        check_is_fitted(other)
        if not np.array_equal(self.classes_, other.classes_):
            raise ValueError(f"cannot merge models with different classes "
                             f"({list(self.classes_)!r} vs {list(other.classes_)!r})")
        self._model.merge(other._model)
        return self

    # ---- prediction

    def _check_X(self, X):
        if "_model" not in self.__dict__:
            check_is_fitted(self)  # raises NotFittedError
        if not self._is_ready(X):
            X = core_rows(self._validate_data(X, reset=False, dtype=_DTYPES, order=None,
                                              accept_sparse=ACCEPT_SPARSE))
        self._model.threads = _threads(self.n_jobs)
        return X

    def _is_ready(self, X):
        """Whether X is already what _validate_data would return unchanged: a non-empty
        2-D ndarray of a native element type, the right width, all finite, fitted without
        feature names. Skipping the full validation for it keeps one-row predictions
        within a few microseconds of the C++ call."""
        if type(X) is not np.ndarray or X.ndim != 2 or X.dtype not in _DTYPES:
            return False
        if X.shape[0] == 0 or X.shape[1] != self.n_features_in_:
            return False
        if "feature_names_in_" in self.__dict__:
            return False
        # A finite sum means every element is finite (an overflow to inf only sends the
        # array through the full check, which then accepts it).
        return X.dtype == np.uint8 or bool(np.isfinite(X.sum()))

    def predict(self, X):
        """The class of each row (the class with the lowest score)."""
        X = self._check_X(X)
        return self.classes_[self._model.predict(X)]

    def predict_proba(self, X):
        """Calibrated class probabilities, n × len(classes_): the class frequencies weigh
        softmax(−score/(ρ·t)), t the model's temperature (set by flynn.tune; 0.054 when
        none was set). docs/evaluation.md, "Calibrated probabilities"."""
        X = self._check_X(X)
        return self._model.predict_proba(X)

    def decision_function(self, X):
        """−score per class (n × L); for two classes, score(classes_[0]) − score(classes_[1])
        (n,), positive when classes_[1] is predicted."""
        X = self._check_X(X)
        scores = self._model.scores(X)
        if len(self.classes_) == 2:
            return scores[:, 0] - scores[:, 1]
        return -scores

    def scores(self, X):
        """flynn's raw scores Σ γ^count over the winners, n × L (lower = more familiar)."""
        X = self._check_X(X)
        return self._model.scores(X)

    # ---- model files, pickling, federation

    def save(self, path):
        """Writes the model file (the CLI's format; atomically)."""
        check_is_fitted(self)
        self._model.save(os.fspath(path))

    def to_bytes(self):
        """The model file's bytes: identical to what ``flynn train`` writes for the same
        rows, labels and hyper-parameters."""
        check_is_fitted(self)
        return self._model.to_bytes()

    @classmethod
    def from_bytes(cls, data, n_jobs=None, source="<bytes>"):
        """A fitted classifier from a model file's bytes."""
        return cls._from_model(_flynn.Model.from_bytes(bytes(data), source, _threads(n_jobs)),
                               n_jobs)

    @classmethod
    def _from_model(cls, model, n_jobs, classes=None):
        config = model.config
        clf = cls(m=config["m"], s=config["s"], rho=config["rho"], gamma=config["gamma"],
                  seed=config["seed"], preprocess=config["preprocess"],
                  variant=config["variant"], n_jobs=n_jobs)
        clf._model = model
        clf.classes_ = _classes_from_names(model.labels) if classes is None else classes
        clf.n_features_in_ = config["n_features"]
        clf.config_ = config
        return clf

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns __dict__ itself
        if "_model" in state:
            # The model file's bytes: deterministic, and all a model is.
            state["_model"] = self._model.to_bytes()
        return state

    def __setstate__(self, state):
        if "_model" in state:
            state = dict(state)
            state["_model"] = _flynn.Model.from_bytes(state["_model"], "<pickle>",
                                                     _threads(state.get("n_jobs")))
        super().__setstate__(state)

    def export_counts(self):
        """This party's counts, to carry to an aggregator over any transport:
        a flynn.federated.PartyCounts (see flynn.federated)."""
        from .federated import PartyCounts
        check_is_fitted(self)
        counts, rows = self._model.counts()
        return PartyCounts(config=dict(self._model.config), classes=self.classes_.copy(),
                           counts=counts, rows_per_class=rows)

    @classmethod
    def from_counts(cls, parts, n_jobs=None):
        """The aggregated model of several parties' PartyCounts (exactly the model trained
        on all their rows) or DpRelease objects (flynn.federated)."""
        from .federated import aggregate
        return aggregate(parts, n_jobs=n_jobs)

    def _more_tags(self):
        # No poor_score: with d ≤ 4 the defaults switch to thermometer codes (docs/defaults.md),
        # so check_classifiers_train's 2-feature blobs score above its 0.83 (a test).
        return {"requires_y": True}


def load(path, n_jobs=None):
    """Reads a model file (from ``flynn train``, ``flynn federated`` or save()) as a fitted
    FlyNNClassifier. classes_ are integers when every class name is one, strings otherwise."""
    return FlyNNClassifier._from_model(_flynn.Model.load(os.fspath(path), _threads(n_jobs)),
                                       n_jobs)
