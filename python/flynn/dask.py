"""Training and prediction on Dask collections: FlyNN scaled out over a Dask cluster.

FlyNN's training is a sum of integer counts, so it splits over partitions exactly:

    >>> import flynn.dask                                         # doctest: +SKIP
    >>> clf = flynn.dask.fit(X, y, seed=1)          # X: Dask array or DataFrame, y: its labels
    >>> labels = flynn.dask.predict(clf, X_new)     # lazy: a Dask array or Series
    >>> clf.predict(X_small)                        # clf is an ordinary FlyNNClassifier

``fit`` returns the FlyNNClassifier that ``FlyNNClassifier(**params).fit(X.compute(),
y.compute())`` returns: the same model file bytes (table schema included), for any
partitioning. It runs up to three passes over the partitions, each task on the worker that
holds the partition:

* pass 1, when ``classes`` is not given, the variant standardises features (the default
  variant does) or missing="mean" (the default): each partition's sorted unique labels,
  the exact sums of its non-missing cells (flynn's ImputationSums as 32-bit limbs) and the
  exact per-feature sums of its rows (FeatureSums limbs), reduced in a tree (union;
  element-wise uint64 sums) into the classes, the fill values and the feature statistics;
* pass 1b, under missing="mean" with a standardising variant, only the partitions that
  had missing cells: the feature sums of their rows filled with the global means (central
  training computes the statistics on the filled rows), added to the others';
* pass 2: each partition, its missing cells filled, is counted by a model of the same
  configuration, classes and statistics, and the count tables are summed in a tree in the
  model's own count type (uint32, a clear error naming the class and unit if one would
  overflow).

Only labels, sums and count tables (classes × m integers) leave the workers; the rows
never do. Persist X (``X = X.persist()``) when computing it is costly, since the passes
read it.

``predict``/``predict_proba`` ship the fitted model to the workers as its model file
bytes (one copy per worker) and run ``map_blocks``/``map_partitions``; the results equal
the central ``clf.predict``/``clf.predict_proba`` row for row.

Decisions (the Python guide, "Scale-out with Dask"):

* Input: X a 2-D Dask array, or a Dask DataFrame of numeric columns; y a 1-D Dask array
  or Dask Series with one label per row, partitioned like X (same number of partitions,
  same number of rows in each; checked per partition; rows and labels pair by position,
  as in FlyNNClassifier.fit, not by index), or the name of a column of the DataFrame X.
  A DataFrame with other columns (object, string, category, bool, datetime) is refused
  naming them: FlyNNClassifier.fit one-hot encodes those with categories learned from
  all rows (flynn train's rules for text columns), which flynn.dask does not reduce; encode them
  first (e.g. ``dd.get_dummies(X.categorize(), dtype="uint8")``).
* Table schema: a DataFrame's string column names (``feature_names_in_``), y's name (or
  ``label_name``) and, under missing="mean", the fill values are stored in the model file
  as FlyNNClassifier.fit stores them; the schema is decided by the classifier's own
  training path (FlyNNClassifier._training_rows on one sample row) and completed with the
  reduced imputation sums (io::completed_schema, as a federation completes its tables).
  Dask arrays are positional (a schema only for fill values, as fit on an array with NaN).
* Chunks split along columns are rechunked to whole rows (each row is hashed whole);
  a Dask array y whose chunks differ from X's rows is rechunked to them.
* Missing values (NaN; pd.NA in nullable columns), as FlyNNClassifier's ``missing``:
  "mean" fills them with the whole table's exact means, "zero" with 0, "error" refuses
  them naming the partition, row and column (0-based, within the partition). An infinite
  cell is refused the same way under every policy.
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
from ._classifier import (_DTYPES, FlyNNClassifier, _check_missing, _class_ids, _frame_columns,
                          _is_dataframe, _label_names, _threads)

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
    """TypeError naming the columns FlyNNClassifier.fit would one-hot encode as text (every
    dtype that is not numeric, bool included): flynn.dask does not learn categories."""
    from pandas.api import types as pdt
    bad = [(c, str(t)) for c, t in frame.dtypes.items()
           if not pdt.is_numeric_dtype(t) or pdt.is_bool_dtype(t) or pdt.is_complex_dtype(t)
           or isinstance(t, pdt.CategoricalDtype)]
    if bad:
        listed = ", ".join(f"{c!r} ({t})" for c, t in bad[:10])
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise TypeError(f"flynn.dask trains on numeric columns, but column(s) {listed}{more} "
                        "are not numeric: FlyNNClassifier.fit would one-hot encode them with "
                        "categories learned from all rows, which flynn.dask does not reduce; "
                        "encode them first (e.g. dd.get_dummies(X.categorize(columns=[...]), "
                        "dtype='uint8')) or drop them")


def _partitions(X, y):
    """(x_parts, y_parts, n_features, columns, y_series) for Dask inputs: one Delayed per
    partition of X and of y (in order, equally many), the feature count, the DataFrame's
    column index (None for arrays) and y when it is a Dask Series (whose name is the label
    column's, as a pandas Series' is at FlyNNClassifier.fit; None otherwise)."""
    import dask.array as da
    dd = _dataframe_module()
    is_frame = dd is not None and isinstance(X, dd.DataFrame)
    if is_frame and isinstance(y, str):
        if y not in X.columns:
            raise ValueError(f"y = {y!r} is not a column of X")
        X, y = X.drop(columns=[y]), X[y]
    if is_frame:
        _numeric_columns_or_raise(X)
        columns = X._meta.columns
        n_features = len(X.columns)
        x_parts = list(X.to_delayed(optimize_graph=False))
    elif isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (rows × features), got a {X.ndim}-D Dask array")
        if X.numblocks[1] > 1:
            X = X.rechunk({1: -1})  # each row is hashed whole
        columns = None
        n_features = X.shape[1]
        x_parts = list(X.to_delayed(optimize_graph=False).ravel())
    else:
        raise TypeError(f"X must be a Dask array or Dask DataFrame, not {type(X).__name__}; "
                        "for in-memory data use FlyNNClassifier.fit")
    if n_features == 0:
        raise ValueError("X has no features (0 columns)")

    y_series = None
    if dd is not None and isinstance(y, dd.Series):
        y_series = y
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
    return x_parts, y_parts, n_features, columns, y_series


def _partition_rows(x, y, index, n_features, missing):
    """One partition's rows as FlyNNClassifier.fit reads them (a 2-D array of float32,
    float64 or uint8; a pandas partition's columns converted to float32 as fit converts a
    DataFrame's, NaN = missing) and its labels (1-D): ValueError naming the partition
    otherwise, or naming the row and column of an infinite cell, or of a missing one under
    missing="error". Missing cells are left NaN: see _filled."""
    from sklearn.utils import check_array, column_or_1d
    where = f"partition {index}"
    try:
        if _is_dataframe(x):
            rows = (np.column_stack(_frame_columns(x)) if x.shape[1]
                    else np.empty((len(x), 0), np.float32))
        else:
            # Non-finite cells are checked below, to name their row and column.
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
        bad = np.isinf(rows) if missing != "error" else ~np.isfinite(rows)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            what = ("missing value (missing='error'; 'mean' or 'zero' fill it)"
                    if np.isnan(rows[r, c]) else
                    "infinite value (a feature must be finite; NaN marks a missing one)")
            raise ValueError(f"{where}, row {r}, column {c}: {rows[r, c]}: {what}")
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ValueError(f"{where}: y contains NaN or infinity")
    return rows, labels


def _has_missing(rows):
    return rows.dtype.kind == "f" and bool(np.isnan(rows).any())


def _filled(rows, fill):
    """rows with their missing cells filled (fill: one value per column), as float32, as
    central fit's table encoder fills them; rows without missing cells as they are."""
    if not _has_missing(rows):
        return rows
    return _flynn.dask.fill_missing_cells(rows.astype(np.float32, copy=False),
                                          np.asarray(fill, dtype=np.float32))


# ---- pass 1: classes and feature sums

def _scan_partition(x, y, index, spec):
    """What one partition adds to the first pass, None when it has no rows: its sorted
    unique labels (when the classes are wanted), the ImputationSums limbs of its cells
    (missing="mean"), and the FeatureSums limbs of its rows as they are trained (when the
    variant standardises) — except under missing="mean" for a partition with missing cells,
    whose filled rows need the global means first: its index is listed in "unfilled"."""
    rows, labels = _partition_rows(x, y, index, spec["n_features"], spec["missing"])
    if rows.shape[0] == 0:
        return None
    scan = dict(classes=np.unique(labels) if spec["want_classes"] else None,
                imputation=None, features=None, unfilled=[])
    if spec["missing"] == "mean":
        scan["imputation"] = _flynn.dask.imputation_sum_limbs(rows)
    elif spec["missing"] == "zero":
        rows = _filled(rows, np.zeros(spec["n_features"], np.float32))
    if spec["want_sums"]:
        if _has_missing(rows):
            scan["unfilled"] = [index]
        else:
            scan["features"] = _flynn.dask.feature_sum_limbs(rows, spec["value_transform"])
    return scan


def _sum_limbs(limbs):
    """Element-wise sum of limb arrays (None when there are none): exact in any order, since
    each limb of a partition is below 2^32, so uint64 sums of up to 2^32 partitions cannot
    wrap."""
    limbs = [v for v in limbs if v is not None]
    return np.sum(limbs, axis=0, dtype=np.uint64) if limbs else None


def _combine_scans(*scans):
    """Union of the labels, sums of the limbs, all unfilled partitions."""
    scans = [s for s in scans if s is not None]
    if not scans:
        return None
    labels = [s["classes"] for s in scans if s["classes"] is not None]
    return dict(classes=np.unique(np.concatenate(labels)) if labels else None,
                imputation=_sum_limbs(s["imputation"] for s in scans),
                features=_sum_limbs(s["features"] for s in scans),
                unfilled=[i for s in scans for i in s["unfilled"]])


def _filled_feature_sums(x, y, index, spec):
    """The FeatureSums limbs of a partition's rows filled with the global means (the first
    pass's unfilled partitions)."""
    rows, _ = _partition_rows(x, y, index, spec["n_features"], spec["missing"])
    return _flynn.dask.feature_sum_limbs(_filled(rows, spec["fill"]), spec["value_transform"])


def _combine_limbs(*limbs):
    return _sum_limbs(limbs)


# ---- pass 2: counts

def _count_partition(x, y, index, spec):
    """The counts (classes × m uint32, rows per class uint64) a partition adds to a model of
    spec's configuration, classes and statistics; None when it has no rows."""
    rows, labels = _partition_rows(x, y, index, spec["n_features"], spec["missing"])
    if rows.shape[0] == 0:
        return None
    rows = _filled(rows, spec["fill"])
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


def _calibration_partition(x, y, index, spec):
    """The calibration fit's loss sums over a partition's rows (those the fit picks), scored
    leave-one-out against the summed model; (zeros, 0) when it has no rows."""
    rows, labels = _partition_rows(x, y, index, spec["n_features"], spec["missing"])
    model = _flynn.Model.from_bytes(spec["model"], threads=spec["task_threads"])
    if rows.shape[0] == 0:
        return np.zeros(2 * len(_flynn.calibration_grid()) + 1, np.uint64), 0
    rows = _filled(rows, spec["fill"])
    ids = _class_ids(labels, spec["classes"])
    return model.calibration_loss(rows, ids, spec["total_rows"])


def _combine_losses(*parts):
    """The sum of partitions' calibration loss sums (exact: unsigned integers)."""
    sums = np.zeros(2 * len(_flynn.calibration_grid()) + 1, np.uint64)
    rows = 0
    for part_sums, part_rows in parts:
        sums += np.asarray(part_sums, np.uint64)
        rows += int(part_rows)
    return sums, rows


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


def _training_schema(clf, columns, n_features, label_name):
    """The table schema clf.fit learns for a table of these columns (names, label name),
    before its fill values, decided by the classifier's own training path (its name checks
    and the table encoder) on one sample row: every cell missing under missing="mean" and
    "zero", so that an unnamed table keeps its schema for completed_schema to decide, zeros
    under "error". Sets clf's n_features_in_ and feature_names_in_ as fit does. An empty
    schema or None when fit would store none."""
    sample = np.full((1, n_features), 0.0 if clf.missing == "error" else np.nan, np.float32)
    if columns is not None:
        import pandas as pd
        sample = pd.DataFrame(sample, columns=columns)
    _, _, schema = clf._training_rows(sample, np.zeros(1, np.int64), reset=True,
                                      label_name=label_name)
    return schema


def fit(X, y, classes=None, *, split_every=None, **params):
    """A FlyNNClassifier trained on a Dask array or DataFrame where it lives.

    Each partition is counted on its worker and the counts are summed exactly, so the model
    file bytes equal those of ``FlyNNClassifier(**params).fit(X.compute(), y.compute())``
    (with ``classes``: of ``partial_fit(X, y, classes=classes)`` on a new estimator).
    Computes with Dask's current scheduler (a distributed Client when one is active); the
    module documentation gives the input rules.

    Parameters
    ----------
    X : dask.array.Array or dask.dataframe.DataFrame
        The rows: a 2-D array, or a DataFrame of numeric columns.
    y : dask.array.Array, dask.dataframe.Series or str
        The labels, partitioned like X, or the name of a column of X.
    classes : array-like, optional
        The model's classes (their sorted unique values); a label outside them is an error.
    split_every : int, default 8
        Partial results summed per node of the reduction trees.
    **params
        FlyNNClassifier's parameters (m, s, rho, gamma, seed, preprocess, variant, n_jobs,
        missing, label_name, ...).

    Returns
    -------
    FlyNNClassifier
    """
    dask = _import_dask()
    template = FlyNNClassifier(**params)  # unknown parameters fail here, before any work
    _check_missing(template.missing)
    split_every = _SPLIT_EVERY if split_every is None else int(split_every)
    if split_every < 2:
        raise ValueError(f"split_every = {split_every}: must be at least 2")
    x_parts, y_parts, n_features, columns, y_series = _partitions(X, y)
    if not x_parts:
        raise ValueError("X has no partitions")
    # A Dask array's .name is its graph key, not a column name: only a Series names y.
    label_name = template._label_name_of(y_series)
    schema = _training_schema(template, columns, n_features, label_name)

    # The variant (and so whether statistics are needed) depends on the feature count
    # only, not on the classes.
    resolved = template._hyper().resolve(n_features)
    standardizes = _flynn.dask.standardizes(resolved["variant"])
    mean = template.missing == "mean"
    if classes is not None:
        classes = np.unique(np.asarray(classes))
    spec = dict(n_features=n_features, missing=template.missing, want_classes=classes is None,
                want_sums=standardizes, value_transform=resolved["value_transform"],
                fill=np.zeros(n_features, np.float32) if template.missing == "zero" else None)
    stats = None
    if classes is None or standardizes or mean:
        # Pass 1: classes, imputation sums, feature sums of the rows that need no fill.
        scans = [dask.delayed(_scan_partition, pure=True)(x, yp, i, spec)
                 for i, (x, yp) in enumerate(zip(x_parts, y_parts))]
        scan = dask.compute(_tree(scans, _combine_scans, split_every))[0]
        if scan is None:
            raise ValueError("X has no rows (every partition is empty)")
        if classes is None:
            classes = scan["classes"]
        if mean:
            # Central fit fills the missing cells with the whole table's means before
            # anything learns from the rows (the feature statistics included).
            schema = _flynn.dask.completed_schema(schema, scan["imputation"], n_features)
            spec["fill"] = None if schema.empty else np.asarray(schema.fill, np.float32)
        if standardizes:
            limbs = scan["features"]
            if scan["unfilled"]:
                # Pass 1b, over the partitions with missing cells only: their filled rows'
                # feature sums, added to the others'.
                refills = [dask.delayed(_filled_feature_sums, pure=True)(
                               x_parts[i], y_parts[i], i, spec) for i in scan["unfilled"]]
                limbs = _sum_limbs([limbs, dask.compute(
                    _tree(refills, _combine_limbs, split_every))[0]])
            stats = _flynn.dask.feature_stats_from_limbs(limbs, n_features, spec["value_transform"])

    from sklearn.utils.multiclass import check_classification_targets
    check_classification_targets(classes)  # the same types fit accepts (on the distinct labels)
    if len(classes) < 2:
        raise ValueError("FlyNNClassifier needs at least two classes to train, but y has "
                         "only one class")
    clf = template
    clf._new_model(classes, n_features)  # the configuration is checked before counting

    spec.update(params=template.get_params(), classes=classes, stats=stats,
                task_threads=_task_threads(template.n_jobs))
    counted = [dask.delayed(_count_partition, pure=True)(x, yp, i, spec)
               for i, (x, yp) in enumerate(zip(x_parts, y_parts))]
    total = dask.compute(_tree(counted, _combine_counts, split_every))[0]
    if total is None:
        raise ValueError("X has no rows (every partition is empty)")
    counts, rows_per_class = total
    if stats is not None:
        _flynn.dask.set_feature_stats(clf._model, *stats)
    clf._model.set_counts(counts, rows_per_class, _flynn.Provenance())
    # Pass 3: the calibration fit (FlyNN::fit's): each partition scores the rows the fit
    # picks leave-one-out against the summed counts; the integer loss sums add up exactly.
    spec.update(model=dask.delayed(clf._model.to_bytes(), pure=True),
                total_rows=int(np.sum(rows_per_class)))
    losses = [dask.delayed(_calibration_partition, pure=True)(x, yp, i, spec)
              for i, (x, yp) in enumerate(zip(x_parts, y_parts))]
    loss = dask.compute(_tree(losses, _combine_losses, split_every))[0]
    clf._model.calibrate_from_losses(*loss)
    clf._set_table(schema)
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
    """The predicted class of every row, computed on the workers.

    Parameters
    ----------
    clf : FlyNNClassifier
        A fitted classifier; shipped to each worker once, as its model file bytes.
    X : dask.array.Array or dask.dataframe.DataFrame
        The rows.

    Returns
    -------
    dask.array.Array or dask.dataframe.Series
        A lazy 1-D Dask array, or for a DataFrame a lazy Series named "prediction" with X's
        index: ``clf.predict`` of each partition. Rows with NaN or the wrong width raise as
        ``clf.predict`` does.
    """
    return _apply(clf, X, "predict")


def predict_proba(clf, X):
    """``clf.predict_proba`` of every row, computed on the workers.

    Parameters
    ----------
    clf : FlyNNClassifier
        A fitted classifier.
    X : dask.array.Array or dask.dataframe.DataFrame
        The rows.

    Returns
    -------
    dask.array.Array or dask.dataframe.DataFrame
        A lazy n × classes Dask array, or for a DataFrame a lazy DataFrame with one column
        per class and X's index.
    """
    return _apply(clf, X, "predict_proba")
