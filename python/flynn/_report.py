"""flynn.report: the classification report `flynn eval/predict/tune --report` write."""
import json

import numpy as np

from . import _flynn

_EXCLUDED = np.iinfo(np.uint32).max


class Report:
    """A classification report: the numbers of report.json, and the same folder on disk.

    Computed once, in the library, from the rows' classes, the classes ``predict``
    returned and the probabilities ``predict_proba`` returned (the CLI's ``--report`` uses
    the same code). ``to_dict()`` returns report.json's content; ``write(folder)`` writes
    report.json, report.html and the PNG figures at once; in a notebook the report shows as
    its page. The attributes are the keys of report.json.

    Attributes
    ----------
    accuracy_, balanced_accuracy_, log_loss_, ece_ : float
        The figures over the rows reported on.
    rows_ : int
        Rows reported on.
    excluded_rows_ : int
        Rows whose class the model does not know (left out).
    classes_ : list of str
        Class names, in the model's order.
    per_class_ : list of dict
        One per class: "class", "precision", "recall", "f1", "support", "predicted".
    macro_avg_, weighted_avg_ : dict
        "precision", "recall", "f1".
    confusion_matrix_ : numpy.ndarray or None
        Rows (true class) by columns (predicted class) counts; None beyond 100 classes.
    confusion_matrix_normalised_ : numpy.ndarray or None
        Each row of the confusion matrix divided by its rows.
    reliability_ : dict
        The ECE's bins: "bins", "ece", "rows" (one dict per bin: "lower", "upper", "rows",
        "mean_confidence", "accuracy").
    binary_ : dict or None
        For two classes (None otherwise): "positive_class", "prevalence", "roc_auc",
        "average_precision", "roc" and "precision_recall" curves.
    """

    def __init__(self, handle):
        self._handle = handle
        self._data = json.loads(handle.to_json())
        d = self._data
        self.rows_ = d["rows"]
        self.excluded_rows_ = d["excluded_rows"]
        self.classes_ = list(d["classes"])
        self.accuracy_ = d["accuracy"]
        self.balanced_accuracy_ = d["balanced_accuracy"]
        self.log_loss_ = d["log_loss"]
        self.ece_ = d["ece"]
        self.per_class_ = d["per_class"]
        self.macro_avg_ = d["macro_avg"]
        self.weighted_avg_ = d["weighted_avg"]
        self.reliability_ = d["reliability"]
        self.binary_ = d.get("binary")
        cm = d.get("confusion_matrix")
        self.confusion_matrix_ = None if cm is None else np.asarray(cm["counts"], dtype=np.int64)
        self.confusion_matrix_normalised_ = None if cm is None else np.asarray(cm["normalised"])

    def to_dict(self):
        """report.json's content (a fresh copy)."""
        return json.loads(json.dumps(self._data))

    def write(self, folder):
        """Writes report.json, report.html and the figures into `folder` (a new folder, an
        empty one or an earlier report, replaced), all at once; returns the file names."""
        return self._handle.write(str(folder))

    def html(self):
        """report.html's page (self-contained: figures inline, no script)."""
        return self._handle.html()

    def figures(self):
        """The PNG figures: {file name: bytes}."""
        return dict(self._handle.figures())

    def _repr_html_(self):
        return self.html()

    def __repr__(self):
        return (f"Report(rows={self.rows_}, accuracy={self.accuracy_:.4f}, "
                f"balanced_accuracy={self.balanced_accuracy_:.4f}, log_loss={self.log_loss_:.4f}, "
                f"ece={self.ece_:.4f})")


def _class_names(model, classes):
    labels = getattr(getattr(model, "_model", None), "labels", None)
    return list(labels) if labels is not None else [str(c) for c in classes]


def _ids_in(values, classes):
    """Ids of `values` in `classes` (any order); _EXCLUDED for a value not among them."""
    index = {c: i for i, c in enumerate(classes.tolist())}
    return np.array([index.get(v, _EXCLUDED) for v in np.asarray(values).tolist()], dtype=np.int64)


def _build(truth, predicted, proba, names, title, description, facts):
    keep = truth != _EXCLUDED
    handle = _flynn.classification_report(
        truth[keep].astype(np.uint32), predicted[keep].astype(np.uint32),
        np.ascontiguousarray(proba[keep], dtype=np.float64), names, int((~keep).sum()), title,
        description, json.dumps(facts))
    return Report(handle)


def report(model, X, y, *, title=None):
    """The classification report of a fitted classifier on rows X with classes y: what
    ``flynn predict --report`` writes for a labelled file. The answers are the model's
    own: ``model.predict(X)`` and ``model.predict_proba(X)`` (columns in ``model.classes_``
    order); rows whose class the model does not know are left out and counted. Works with
    any scikit-learn classifier that has predict_proba. Returns a Report."""
    if not hasattr(_flynn, "classification_report"):
        raise RuntimeError("this flynn module was built without the evaluation layer "
                           "(FLYNN_PYTHON_TUNE=0); reinstall with it to use flynn.report")
    classes = np.asarray(model.classes_)
    predicted = _ids_in(model.predict(X), classes)
    proba = np.asarray(model.predict_proba(X), dtype=np.float64)
    truth = _ids_in(y, classes)
    if proba.ndim != 2 or proba.shape != (len(truth), len(classes)):
        raise ValueError(f"predict_proba returned shape {proba.shape}, expected "
                         f"{(len(truth), len(classes))}")
    if np.any(predicted == _EXCLUDED):
        raise ValueError("predict returned a class that is not in classes_")
    facts = {"model": type(model).__name__}
    description = ("The model's answers for the rows given (the class predict returns, and the "
                   "probabilities predict_proba returns), judged against their labels.")
    return _build(truth, predicted, proba, _class_names(model, classes),
                  title or f"flynn.report: {type(model).__name__}", description, facts)


def report_from_predictions(y_true, y_pred, y_proba, classes, *, title=None):
    """The classification report of answers already made: y_pred the predicted classes,
    y_proba the probabilities (n x len(classes), columns in `classes` order), y_true the
    classes of the rows (rows whose class is not in `classes` are left out and counted).
    Returns a Report."""
    classes = np.asarray(classes)
    truth = _ids_in(y_true, classes)
    predicted = _ids_in(y_pred, classes)
    if np.any(predicted == _EXCLUDED):
        raise ValueError("y_pred holds a class that is not in classes")
    proba = np.asarray(y_proba, dtype=np.float64)
    description = "The answers given (predicted classes and probabilities), judged against their labels."
    return _build(truth, predicted, proba, [str(c) for c in classes],
                  title or "flynn.report", description, {})
