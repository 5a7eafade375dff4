"""Training and prediction on Dask collections: FlyNN scaled out over a Dask cluster.

FlyNN's training is a sum of integer counts, so it splits over partitions exactly:

    >>> import flynn.dask                                         # doctest: +SKIP
    >>> clf = flynn.dask.fit(X, y, seed=1)          # X: Dask array or DataFrame, y: its labels
    >>> labels = flynn.dask.predict(clf, X_new)     # lazy: a Dask array or Series
    >>> clf.predict(X_small)                        # clf is an ordinary FlyNNClassifier

``fit`` returns the FlyNNClassifier that ``FlyNNClassifier(**params).fit(X.compute(),
y.compute())`` returns: the same model file bytes, for any partitioning. It runs up to
two passes over the partitions, each task on the worker that holds the partition:

1. when ``classes`` is not given or the variant standardises features (the default
   variant does): each partition's sorted unique labels and exact per-feature integer
   sums (flynn's FeatureSums as 32-bit limbs), reduced in a tree (union; element-wise
   uint64 sums) into the classes and the feature statistics;
2. each partition is counted by a model of the same configuration, classes and
   statistics, and the count tables are summed in a tree in the model's own count type
   (uint32, a clear error naming the class and unit if one would overflow).

Only labels, sums and count tables (classes × m integers) leave the workers; the rows
never do. Persist X (``X = X.persist()``) when computing it is costly, since both passes
read it.

``predict``/``predict_proba`` ship the fitted model to the workers as its model file
bytes (one copy per worker) and run ``map_blocks``/``map_partitions``; the results equal
the central ``clf.predict``/``clf.predict_proba`` row for row.

Decisions (docs/python.md, "Scale-out with Dask"):

* Input: X a 2-D Dask array, or a Dask DataFrame of numeric (or bool) columns; y a 1-D
  Dask array or Dask Series with one label per row, partitioned like X (same number of
  partitions, same number of rows in each; checked per partition; rows and labels pair by
  position, as in FlyNNClassifier.fit, not by index), or the name of a column of the
  DataFrame X. A DataFrame with other columns (object, string, category, datetime) is
  refused naming them: encode them first (e.g. ``dd.get_dummies(X.categorize())``).
  Column names are kept as ``feature_names_in_`` as in FlyNNClassifier.fit.
* Chunks split along columns are rechunked to whole rows (each row is hashed whole);
  a Dask array y whose chunks differ from X's rows is rechunked to them.
* Missing values: a NaN or infinite cell is refused, naming the partition, row and
  column; fill or drop them first (the missing-value fill needs the whole table's means,
  which flynn.dask does not reduce).
* Empty partitions contribute nothing (they are skipped); no rows at all is an error.
* ``classes``: when given, the model's classes are exactly their sorted unique values
  (as FlyNNClassifier.partial_fit's ``classes``), and a label outside them is an error
  naming the partition and the label; when not given, they are the labels' sorted unique
  values from the first pass.
* Threads: every task runs flynn with ``n_jobs`` threads when it is given, else with one
  thread: Dask's worker threads already run one task per partition in parallel. The
  returned classifier keeps ``n_jobs`` as given. Results never depend on threads.

Dask is imported when these functions are first called; without it they raise an
ImportError saying what to install.
"""
import pickle

import numpy as np

from . import _flynn
from ._classifier import _DTYPES, FlyNNClassifier, _class_ids, _label_names, _threads

__all__ = ["fit", "predict", "predict_proba"]

# Partial results combined per node of the reduction trees (as dask's split_every).
_SPLIT_EVERY = 8


def _import_dask():
    try:
        import dask
        import dask.array
    except ImportError as e:
        raise ImportError(
            "flynn.dask needs Dask: install it (Debian: apt-get install python3-dask "
            "python3-distributed; pip: pip install 'dask[complete]')") from e
    return dask


def _dataframe_module():
    """dask.dataframe, or None when it (or pandas) is not installed: then no input can be
    a Dask DataFrame."""
    try:
        import dask.dataframe as dd
    except ImportError:
        return None
    return dd


# ---- inputs: the partitions of X and y, as pairs of Delayed objects

def _numeric_columns_or_raise(frame):
    import pandas as pd
    bad = [(c, str(t)) for c, t in frame.dtypes.items()
           if not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))
           or isinstance(t, pd.CategoricalDtype)]
    if bad:
        listed = ", ".join(f"{c!r} ({t})" for c, t in bad[:10])
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise TypeError(f"flynn.dask trains on numeric columns, but column(s) {listed}{more} "
                        "are not numeric: encode them first (e.g. "
                        "dd.get_dummies(X.categorize(columns=[...]))) or drop them")


def _partitions(X, y):
    """(x_parts, y_parts, n_features, feature_names, X) for Dask inputs: one Delayed per
    partition of X and of y (in order, equally many), the feature count, the DataFrame's
    feature names (None for arrays or non-string column names) and X as it will be read
    (rechunked to whole rows)."""
    import dask.array as da
    dd = _dataframe_module()
    is_frame = dd is not None and isinstance(X, dd.DataFrame)
    if is_frame and isinstance(y, str):
        if y not in X.columns:
            raise ValueError(f"y = {y!r} is not a column of X")
        X, y = X.drop(columns=[y]), X[y]
    if is_frame:
        from sklearn.utils.validation import _get_feature_names
        _numeric_columns_or_raise(X)
        names = _get_feature_names(X._meta)  # FlyNNClassifier.fit's rule, on the column index
        n_features = len(X.columns)
        x_parts = list(X.to_delayed(optimize_graph=False))
    elif isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (rows × features), got a {X.ndim}-D Dask array")
        if X.numblocks[1] > 1:
            X = X.rechunk({1: -1})  # each row is hashed whole
        names = None
        n_features = X.shape[1]
        x_parts = list(X.to_delayed(optimize_graph=False).ravel())
    else:
        raise TypeError(f"X must be a Dask array or Dask DataFrame, not {type(X).__name__}; "
                        "for in-memory data use FlyNNClassifier.fit")
    if n_features == 0:
        raise ValueError("X has no features (0 columns)")

    if dd is not None and isinstance(y, dd.Series):
        y_parts = list(y.to_delayed(optimize_graph=False))
    elif isinstance(y, da.Array):
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (one label per row), got a {y.ndim}-D Dask array")
        rows = X.chunks[0] if isinstance(X, da.Array) else None
        known = rows is not None and not any(np.isnan(rows)) and not any(np.isnan(y.chunks[0]))
        if known and y.chunks[0] != rows:
            if y.shape[0] != X.shape[0]:
                raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
            y = y.rechunk({0: rows})
        y_parts = list(y.to_delayed(optimize_graph=False))
    else:
        raise TypeError(f"y must be a Dask array or Dask Series (or, with a DataFrame X, the "
                        f"name of its label column), not {type(y).__name__}")
    if len(y_parts) != len(x_parts):
        raise ValueError(f"X has {len(x_parts)} partitions but y has {len(y_parts)}: partition "
                         "them alike (e.g. take both from one DataFrame, or rechunk y to "
                         "X.chunks[0])")
    return x_parts, y_parts, n_features, names, X


def _partition_rows(x, y, index, n_features):
    """One partition's rows as FlyNNClassifier.fit reads them (a 2-D array of float32,
    float64 or uint8) and its labels (1-D): ValueError naming the partition otherwise."""
    from sklearn.utils import check_array, column_or_1d
    where = f"partition {index}"
    try:
        # NaN cells are checked below, to name their row and column.
        rows = check_array(x, dtype=_DTYPES, order=None, ensure_min_samples=0,
                           force_all_finite=False)
        labels = column_or_1d(y, warn=True)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    if rows.shape[1] != n_features:
        raise ValueError(f"{where}: {rows.shape[1]} columns, expected {n_features}")
    if labels.shape[0] != rows.shape[0]:
        raise ValueError(f"{where}: {rows.shape[0]} rows but {labels.shape[0]} labels: X and "
                         "y must be partitioned alike")
    if rows.dtype.kind == "f" and not np.isfinite(rows).all():
        r, c = np.argwhere(~np.isfinite(rows))[0]
        raise ValueError(f"{where}, row {r}, column {c}: {rows[r, c]} — flynn.dask trains on "
                         "finite values only: fill or drop missing values first (e.g. "
                         "X.fillna(...), X.dropna())")
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ValueError(f"{where}: y contains NaN or infinity")
    return rows, labels


# ---- pass 1: classes and feature sums

def _scan_partition(x, y, index, n_features, want_classes, want_sums):
    """(sorted unique labels or None, FeatureSums limbs or None) of one partition;
    (None, None) when it has no rows."""
    rows, labels = _partition_rows(x, y, index, n_features)
    if rows.shape[0] == 0:
        return None, None
    return (np.unique(labels) if want_classes else None,
            _flynn.dask.feature_sum_limbs(rows) if want_sums else None)


def _combine_scans(*scans):
    """Union of the labels, element-wise sum of the limbs: exact in any order (each limb
    of a partition is below 2^32, so uint64 sums of up to 2^32 partitions cannot wrap)."""
    labels = [s[0] for s in scans if s[0] is not None]
    limbs = [s[1] for s in scans if s[1] is not None]
    return (np.unique(np.concatenate(labels)) if labels else None,
            np.sum(limbs, axis=0, dtype=np.uint64) if limbs else None)


# ---- pass 2: counts

def _count_partition(x, y, index, spec):
    """The counts (classes × m uint32, rows per class uint64) a partition adds to a model of
    spec's configuration, classes and statistics; None when it has no rows."""
    rows, labels = _partition_rows(x, y, index, spec["n_features"])
    if rows.shape[0] == 0:
        return None
    try:
        ids = _class_ids(labels, spec["classes"])
    except ValueError as e:
        raise ValueError(f"partition {index}: {e}") from None
    template = FlyNNClassifier(**spec["params"])
    model = _flynn.Model(template._hyper(), spec["n_features"], _label_names(spec["classes"]),
                         spec["task_threads"])
    if spec["stats"] is not None:
        _flynn.dask.set_feature_stats(model, *spec["stats"])
    model.partial_fit(rows, ids)  # with statistics set, partial_fit only counts
    return model.counts()


def _combine_counts(*parts):
    """The exact sum of count tables (None = an empty partition), overflow-checked by the
    core's ClassCounts."""
    tables = [p for p in parts if p is not None]
    return _flynn.dask.sum_counts(tables) if tables else None


def _tree(parts, combine, split_every):
    """A tree of delayed `combine` calls over `parts` (split_every per node): the reduction
    runs on the workers, and only its root comes back."""
    from dask import delayed
    level = list(parts)
    while len(level) > 1:
        level = [delayed(combine, pure=True)(*level[i:i + split_every])
                 for i in range(0, len(level), split_every)]
    return level[0]


def _task_threads(n_jobs):
    return _threads(n_jobs) if n_jobs is not None else 1


def fit(X, y, classes=None, *, split_every=None, **params):
    """A FlyNNClassifier(**params) trained on the rows of a Dask array or DataFrame X with
    labels y (a Dask array or Series partitioned like X, or a column name of X): counted
    partition by partition on the workers and summed exactly, so its model file bytes equal
    those of ``FlyNNClassifier(**params).fit(X.compute(), y.compute())`` (with ``classes``:
    of ``partial_fit(X, y, classes=classes)`` on a new estimator).

    ``params`` are FlyNNClassifier's (m, s, rho, gamma, seed, preprocess, variant, n_jobs).
    ``split_every`` (default 8): partial results summed per node of the reduction trees.
    Computes with Dask's current scheduler (a distributed Client when one is active).
    See the module documentation for the input rules."""
    dask = _import_dask()
    template = FlyNNClassifier(**params)  # unknown parameters fail here, before any work
    split_every = _SPLIT_EVERY if split_every is None else int(split_every)
    if split_every < 2:
        raise ValueError(f"split_every = {split_every}: must be at least 2")
    x_parts, y_parts, n_features, names, _ = _partitions(X, y)
    if not x_parts:
        raise ValueError("X has no partitions")

    # The variant (and so whether statistics are needed) depends on the feature count
    # only, not on the classes.
    variant = template._hyper().resolve(n_features)["variant"]
    standardizes = _flynn.dask.standardizes(variant)
    if classes is not None:
        classes = np.unique(np.asarray(classes))
    stats = None
    if classes is None or standardizes:
        scans = [dask.delayed(_scan_partition, pure=True)(
                     x, yp, i, n_features, classes is None, standardizes)
                 for i, (x, yp) in enumerate(zip(x_parts, y_parts))]
        found, limbs = dask.compute(_tree(scans, _combine_scans, split_every))[0]
        if found is None and limbs is None:
            raise ValueError("X has no rows (every partition is empty)")
        if classes is None:
            classes = found
        if standardizes:
            stats = _flynn.dask.feature_stats_from_limbs(limbs, n_features)

    from sklearn.utils.multiclass import check_classification_targets
    check_classification_targets(classes)  # the same types fit accepts (on the distinct labels)
    if len(classes) < 2:
        raise ValueError("FlyNNClassifier needs at least two classes to train, but y has "
                         "only one class")
    clf = template
    clf._new_model(classes, n_features)  # the configuration is checked before counting

    spec = dict(params=template.get_params(), classes=classes, n_features=n_features,
                stats=stats, task_threads=_task_threads(template.n_jobs))
    counted = [dask.delayed(_count_partition, pure=True)(x, yp, i, spec)
               for i, (x, yp) in enumerate(zip(x_parts, y_parts))]
    total = dask.compute(_tree(counted, _combine_counts, split_every))[0]
    if total is None:
        raise ValueError("X has no rows (every partition is empty)")
    counts, rows_per_class = total
    if stats is not None:
        _flynn.dask.set_feature_stats(clf._model, *stats)
    clf._model.set_counts(counts, rows_per_class, _flynn.Provenance())
    clf.n_features_in_ = n_features
    if names is not None:
        clf.feature_names_in_ = names
    return clf


# ---- prediction

def _predict_partition(x, shipped, method, n_classes, threads):
    """clf.<method>(x) on one block or partition, the classifier unpickled from its model
    bytes in this task (so tasks on one worker's threads never share a model)."""
    clf = pickle.loads(shipped)
    clf.n_jobs = threads
    if len(x) > 0:
        out = getattr(clf, method)(x)
    elif method == "predict":  # FlyNNClassifier refuses empty inputs; empty partitions are normal
        out = np.empty(0, dtype=clf.classes_.dtype)
    else:
        out = np.empty((0, n_classes))
    if hasattr(x, "index"):  # a pandas partition: keep its index
        import pandas as pd
        if method == "predict":
            return pd.Series(out, index=x.index, name="prediction")
        return pd.DataFrame(out, index=x.index, columns=list(clf.classes_))
    return out


def _apply(clf, X, method):
    from sklearn.utils.validation import check_is_fitted
    import dask.array as da
    dask = _import_dask()
    check_is_fitted(clf)
    # One copy of the pickled estimator (its model file bytes, classes and feature names)
    # in the graph: each worker fetches it once, however many partitions it predicts.
    shipped = dask.delayed(pickle.dumps(clf), pure=True)
    classes = clf.classes_
    threads = _task_threads(clf.n_jobs)
    dd = _dataframe_module()
    if dd is not None and isinstance(X, dd.DataFrame):
        import pandas as pd
        if method == "predict":
            meta = pd.Series(np.empty(0, dtype=classes.dtype), name="prediction")
        else:
            meta = pd.DataFrame(np.empty((0, len(classes))), columns=list(classes))
        return X.map_partitions(_predict_partition, shipped, method, len(classes), threads,
                                meta=meta)
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a Dask array or Dask DataFrame, not {type(X).__name__}; "
                        f"for in-memory data use clf.{method}")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (rows × features), got a {X.ndim}-D Dask array")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    if method == "predict":
        return X.map_blocks(_predict_partition, shipped, method, len(classes), threads,
                            drop_axis=1, dtype=classes.dtype,
                            meta=np.empty(0, dtype=classes.dtype))
    return X.map_blocks(_predict_partition, shipped, method, len(classes), threads,
                        chunks=(X.chunks[0], (len(classes),)), dtype=np.float64,
                        meta=np.empty((0, 0)))


def predict(clf, X):
    """The predicted class of every row of a Dask array (a lazy 1-D Dask array) or Dask
    DataFrame (a lazy Dask Series named "prediction", with X's index): clf.predict on each
    partition, on the workers. Rows with NaN or the wrong width raise as clf.predict does."""
    return _apply(clf, X, "predict")


def predict_proba(clf, X):
    """clf.predict_proba on every row of a Dask array (a lazy n × classes Dask array) or
    Dask DataFrame (a lazy Dask DataFrame with one column per class, X's index)."""
    return _apply(clf, X, "predict_proba")
