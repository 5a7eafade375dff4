"""flynn.fit_file: training from a data file, streamed from disk as ``flynn train`` does."""
import os

from . import _flynn
from ._classifier import FlyNNClassifier, _threads

# The data-format flags of ``flynn train`` (--label-col → label_col, ...), given to the core
# as the CLI's texts (_flynn.LoadFlags).
_LOAD_FLAGS = ("format", "label_col", "header", "delimiter", "idx_labels", "id_col",
               "feature_cols", "ignore_cols", "missing")
# Its hyper-parameter flags (None, or absent: flynn's default, as without the flag): the
# rows of the library's table of settings, as the CLI's flags are.
_HYPER_FLAGS = _flynn.hyper_param_names()
_OTHER_FLAGS = ("labels", "feature_stats", "max_input_bytes", "n_jobs", "chunk_rows")
_ALL_FLAGS = frozenset(_LOAD_FLAGS + _HYPER_FLAGS + _OTHER_FLAGS)


def _flag_text(name, value):
    """A Python value as the CLI's text for flag `name`: lists of columns joined with
    commas, True/False for header as yes/no, numbers in decimal."""
    if name == "header" and isinstance(value, bool):
        return "yes" if value else "no"
    if name in ("feature_cols", "ignore_cols") and isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool) or not isinstance(value, (str, int, os.PathLike)):
        raise TypeError(f"fit_file(): {name}={value!r} must be a string"
                        + (" or a list of columns" if name.endswith("_cols") else "")
                        + (" or an integer" if name in ("label_col", "id_col") else ""))
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def _load_flags(flags):
    """The data-format keywords as the core's LoadFlags (the CLI's texts)."""
    load = _flynn.LoadFlags()
    for name in _LOAD_FLAGS:
        if flags.get(name) is not None:
            setattr(load, name, _flag_text(name, flags[name]))
    max_input_bytes = flags.get("max_input_bytes")
    if max_input_bytes is not None:
        if isinstance(max_input_bytes, bool) or not isinstance(max_input_bytes, int) \
                or max_input_bytes <= 0:
            raise ValueError(f"max_input_bytes={max_input_bytes!r}: give a positive byte count")
        load.max_input_bytes = max_input_bytes
    return load


_EDIT_FLAGS = frozenset(_LOAD_FLAGS + ("max_input_bytes", "chunk_rows"))


def _edit_file(edit, what, model, path, flags):
    unknown = sorted(set(flags) - _EDIT_FLAGS)
    if unknown:
        raise TypeError(f"{what}() got unexpected keyword argument(s) "
                        + ", ".join(repr(k) for k in unknown) + "; the keywords are: "
                        + ", ".join(sorted(_EDIT_FLAGS)))
    if not isinstance(model, FlyNNClassifier) or "_model" not in model.__dict__:
        raise TypeError(f"{what}() needs a fitted FlyNNClassifier (fit, fit_file or load)")
    chunk = {"chunk_rows": flags["chunk_rows"]} if flags.get("chunk_rows") is not None else {}
    model._model.threads = _threads(model.n_jobs)
    edit(model._model, os.fspath(path), _load_flags(flags), **chunk)
    return model


def partial_fit_file(model, path, **flags):
    """Learns the labelled rows of a data file into a fitted FlyNNClassifier.

    Streamed from disk in chunks exactly as ``flynn update --model ... --data path`` reads
    them (with the model's table: its columns, categories and fill values): the same model
    bytes. Every label must be one of the model's classes; a model released under
    differential privacy refuses (ValueError), as ``partial_fit`` does.

    Parameters
    ----------
    model : FlyNNClassifier
        A fitted classifier.
    path : str or path-like
        The data file.
    **flags
        ``fit_file``'s data-format keywords, and ``chunk_rows``.

    Returns
    -------
    FlyNNClassifier
        The model.
    """
    return _edit_file(_flynn.learn_file, "partial_fit_file", model, path, flags)


def forget_file(model, path, **flags):
    """Removes the labelled rows of a data file from a fitted FlyNNClassifier.

    As ``flynn forget`` does: the result equals the model trained without them; rows it
    cannot hold are refused (ValueError), the model unchanged.

    Parameters
    ----------
    model : FlyNNClassifier
        A fitted classifier.
    path : str or path-like
        The data file.
    **flags
        As ``partial_fit_file``.

    Returns
    -------
    FlyNNClassifier
        The model.
    """
    return _edit_file(_flynn.forget_file, "forget_file", model, path, flags)


def fit_file(path, **flags):
    """Trains a FlyNNClassifier on the labelled rows of a data file.

    The file (CSV[.gz], ARFF, IDX[.gz], LIBSVM) is read from disk in bounded chunks exactly
    as ``flynn train --data path`` reads it: the same model bytes for the same flags, in
    the memory of one chunk. Ctrl-C (KeyboardInterrupt) stops the training between chunks.

    Parameters
    ----------
    path : str or path-like
        The data file.
    **flags
        ``flynn train``'s flags with '-' as '_': data format ``format``, ``label_col``,
        ``header`` ("auto", "yes", "no" or a bool), ``delimiter``, ``idx_labels``,
        ``id_col``, ``feature_cols`` and ``ignore_cols`` (a string as on the command line,
        or a list of names and 1-based numbers), ``missing`` ("mean", "zero", "error"),
        ``max_input_bytes`` (an int); the hyper-parameters (``m``, ``expansion_factor``,
        ``s``, ``connection_sparsity``, ``rho``, ``wta_ratio``, ``wta_nnz``, ``gamma``,
        ``seed``, ``preprocess``, ``variant``, ...: the rows of the table of settings);
        ``labels`` (the class list, a list or "a,b,c"), ``feature_stats`` (a statistics
        file) and ``n_jobs`` (threads; never changes the model).

    Returns
    -------
    FlyNNClassifier
        Its ``classes_`` are the model's class names (integers when every name is one),
        ``n_features_in_`` the model's feature count (for a table: after one-hot encoding
        of its text columns), and ``fit_info_`` holds rows, n_features, load_seconds and
        train_seconds, as ``flynn train --json`` reports them.

    Raises
    ------
    TypeError
        An unknown keyword.
    ValueError
        Bad data (a flynn.FlynnError with the CLI's message, naming the file and line).
    """
    unknown = sorted(set(flags) - _ALL_FLAGS)
    if unknown:
        raise TypeError("fit_file() got unexpected keyword argument(s) "
                        + ", ".join(repr(k) for k in unknown)
                        + "; the keywords are flynn train's flags with '-' as '_': "
                        + ", ".join(sorted(_ALL_FLAGS)))
    load = _load_flags(flags)
    labels = flags.get("labels")
    if isinstance(labels, (list, tuple)):
        labels = ",".join(str(c) for c in labels)
    feature_stats = flags.get("feature_stats")
    n_jobs = flags.get("n_jobs")
    # Absent or None: the core's default, as without the flag.
    hyper = {name: flags[name] for name in _HYPER_FLAGS if flags.get(name) is not None}
    chunk = {"chunk_rows": flags["chunk_rows"]} if flags.get("chunk_rows") is not None else {}
    model, rows, n_features, load_seconds, train_seconds = _flynn.train_file(
        os.fspath(path), load, hyper=hyper, labels=labels or "",
        feature_stats=os.fspath(feature_stats) if feature_stats is not None else "",
        threads=_threads(n_jobs), **chunk)
    clf = FlyNNClassifier._from_model(model, n_jobs)
    clf.fit_info_ = {"rows": rows, "n_features": n_features, "load_seconds": load_seconds,
                     "train_seconds": train_seconds}
    return clf
