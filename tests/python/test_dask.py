"""flynn.dask: training on Dask partitions equals central training, byte for byte, and
prediction on the workers equals central prediction. Runs on a distributed.LocalCluster of
3 worker processes bound to 127.0.0.1 (the workers import the installed package).

Skipped when Dask is not installed, except under FLYNN_REQUIRE_DASK=1 (scripts/test.sh),
where a missing Dask fails the run."""
import os
import sys

import numpy as np
import pytest

import flynn
import flynn.dask
from flynn import _flynn

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    import distributed
    import pandas as pd
except ImportError as e:  # pragma: no cover - depends on the machine
    if os.environ.get("FLYNN_REQUIRE_DASK") == "1":
        raise ImportError(f"FLYNN_REQUIRE_DASK=1 but Dask is not importable ({e}); install "
                          "python3-dask and python3-distributed (scripts/setup.sh)") from e
    pytest.skip(f"Dask is not installed ({e}); FLYNN_REQUIRE_DASK=1 makes this a failure",
                allow_module_level=True)

PARAMS = dict(m=2048, s=12, rho=32, gamma=0.7, seed=11)
VARIANTS = [None, "paper"]  # None: the default variant, which standardises (zsign-q+paper)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None, processes=True) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def table(digits):
    """The digits rows reordered so that rows 500..619 are all of class 3 (a partition with
    a single class), as float64 features and int labels."""
    X, y = digits
    threes = np.flatnonzero(y == 3)[:120]
    rest = np.setdiff1d(np.arange(len(y)), threes)
    order = np.concatenate([rest[:500], threes, rest[500:]])
    return X[order], y[order]


# Uneven row chunks: one single row, one empty, one of a single class (rows 500..619).
ROW_CHUNKS = (500, 120, 1, 0, 333, 43, 800)


def central(X, y, **params):
    return flynn.FlyNNClassifier(**params).fit(X, y)


def frame_parts(df, sizes):
    """A Dask DataFrame of df's rows in partitions of the given sizes (0 allowed)."""
    bounds = np.cumsum((0,) + tuple(sizes))
    parts = [dask.delayed(df.iloc[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    return dd.from_delayed(parts, meta=df.iloc[:0], verify_meta=False)


@pytest.mark.parametrize("variant", VARIANTS)
def test_array_fit_is_byte_identical_and_predictions_equal(client, table, variant):
    X, y = table
    assert sum(ROW_CHUNKS) == len(y)
    # Column chunks too: flynn.dask rechunks them to whole rows.
    Xd = da.from_array(X, chunks=(ROW_CHUNKS, (40, 24)))
    yd = da.from_array(y, chunks=(ROW_CHUNKS,))
    clf = flynn.dask.fit(Xd, yd, variant=variant, **PARAMS)
    ref = central(X, y, variant=variant, **PARAMS)
    assert clf.to_bytes() == ref.to_bytes()
    np.testing.assert_array_equal(clf.classes_, ref.classes_)
    assert clf.n_features_in_ == 64
    assert clf.get_params() == ref.get_params()

    Xq = da.from_array(X[::3], chunks=(100, 64))
    pred = flynn.dask.predict(clf, Xq)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), ref.predict(X[::3]))
    proba = flynn.dask.predict_proba(clf, Xq).compute()
    np.testing.assert_array_equal(proba, ref.predict_proba(X[::3]))


@pytest.mark.parametrize("variant", VARIANTS)
def test_dataframe_fit_is_byte_identical_and_predictions_equal(client, table, variant):
    X, y = table
    df = pd.DataFrame(X.astype(np.float32), columns=[f"px{j}" for j in range(64)])
    df["digit"] = y
    ddf = frame_parts(df, ROW_CHUNKS)
    features = ddf.drop(columns=["digit"])
    clf = flynn.dask.fit(features, ddf["digit"], variant=variant, **PARAMS)
    ref = central(df.drop(columns=["digit"]), df["digit"], variant=variant, **PARAMS)
    assert clf.to_bytes() == ref.to_bytes()
    assert list(clf.feature_names_in_) == list(ref.feature_names_in_)
    # The label column's name instead of a Series: the same model.
    assert flynn.dask.fit(ddf, "digit", variant=variant, **PARAMS).to_bytes() == ref.to_bytes()

    pred = flynn.dask.predict(clf, features)
    assert isinstance(pred, dd.Series)
    got = pred.compute()
    np.testing.assert_array_equal(got.to_numpy(), ref.predict(df.drop(columns=["digit"])))
    assert got.index.equals(df.index)
    proba = flynn.dask.predict_proba(clf, features).compute()
    assert list(proba.columns) == list(ref.classes_)
    np.testing.assert_array_equal(proba.to_numpy(),
                                  ref.predict_proba(df.drop(columns=["digit"])))


def test_string_labels_given_classes_and_threads(client, table):
    X, y = table
    names = np.array(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                      "nine"], dtype=object)[y]
    Xd = da.from_array(X.astype(np.float32), chunks=(ROW_CHUNKS, 64))
    yd = da.from_array(names, chunks=(ROW_CHUNKS,))
    # classes given (with one that never occurs): the estimator partial_fit would give.
    classes = list(np.unique(names)) + ["ten"]
    clf = flynn.dask.fit(Xd, yd, classes=classes, n_jobs=2, **PARAMS)
    ref = flynn.FlyNNClassifier(**PARAMS).partial_fit(X, names, classes=classes)
    assert clf.to_bytes() == ref.to_bytes()
    assert clf.n_jobs == 2
    np.testing.assert_array_equal(flynn.dask.predict(clf, Xd).compute(), ref.predict(X))


def test_uint8_rows_and_many_partitions_in_a_deep_tree(client, table):
    X, y = table
    X8 = X.astype(np.uint8)
    Xd = da.from_array(X8, chunks=(60, 64))  # 30 partitions, split_every 2: a 5-level tree
    yd = da.from_array(y, chunks=60)
    clf = flynn.dask.fit(Xd, yd, split_every=2, **PARAMS)
    assert clf.to_bytes() == central(X8, y, **PARAMS).to_bytes()


def test_label_outside_classes_names_partition_and_label(client, table):
    X, y = table
    Xd = da.from_array(X, chunks=(ROW_CHUNKS, 64))
    yd = da.from_array(y, chunks=(ROW_CHUNKS,))
    with pytest.raises(ValueError, match=r"partition \d+: label 0 is not one of the model.s classes"):
        flynn.dask.fit(Xd, yd, classes=range(1, 10), **PARAMS)


def test_nan_cell_names_partition_row_and_column(client, table):
    X, y = table
    X = X.copy()
    X[625, 7] = np.nan  # partition 4 (rows 621..953), its row 4
    Xd = da.from_array(X, chunks=(ROW_CHUNKS, 64))
    yd = da.from_array(y, chunks=(ROW_CHUNKS,))
    with pytest.raises(ValueError, match=r"partition 4, row 4, column 7: nan .*fill or drop"):
        flynn.dask.fit(Xd, yd, **PARAMS)


def test_misaligned_partitions_and_bad_inputs_are_refused(client, table):
    X, y = table
    df = pd.DataFrame(X[:200], columns=[f"c{j}" for j in range(64)])
    ddf = dd.from_pandas(df, npartitions=4)
    ys = dd.from_pandas(pd.Series(y[:200]), npartitions=3)
    with pytest.raises(ValueError, match="X has 4 partitions but y has 3"):
        flynn.dask.fit(ddf, ys, **PARAMS)
    # Same number of partitions, different rows in them: caught on the worker.
    ys = frame_parts(pd.DataFrame({"y": y[:200]}), (10, 90, 50, 50))["y"]
    with pytest.raises(ValueError, match=r"partition [01]: 50 rows but (10|90) labels"):
        flynn.dask.fit(ddf, ys, **PARAMS)
    with pytest.raises(ValueError, match="at least two classes"):
        flynn.dask.fit(da.from_array(X[:50], chunks=25), da.zeros(50, chunks=25), **PARAMS)
    with pytest.raises(ValueError, match="every partition is empty"):
        flynn.dask.fit(da.zeros((0, 3), chunks=(0, 3)), da.zeros(0, chunks=0), variant="paper")
    with pytest.raises(ValueError, match="Unknown label type"):
        flynn.dask.fit(da.from_array(X[:50], chunks=25),
                       da.from_array(np.linspace(0, 1, 50), chunks=25), **PARAMS)
    with pytest.raises(TypeError, match="Dask array or Dask DataFrame"):
        flynn.dask.fit(X, y)
    with pytest.raises(TypeError, match="unexpected keyword"):
        flynn.dask.fit(da.from_array(X), da.from_array(y), bogus=1)


def test_non_numeric_columns_are_refused_by_name():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "colour": ["r", "g", "b", "r"],
                       "kind": pd.Categorical(["x", "y", "x", "y"]), "y": [0, 1, 0, 1]})
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(TypeError, match=r"column\(s\) 'colour' \(object\), 'kind' \(category\) "
                                        r"are not numeric"):
        flynn.dask.fit(ddf, "y")


def test_feature_sum_limbs_add_up_to_the_central_statistics(table):
    """The exact reduction itself: limbs of any split, summed, give the statistics fit
    computes on all rows (bit for bit)."""
    X, y = table
    X32 = X.astype(np.float32) * np.float32(1.37) - np.float32(4.1)  # negative values too
    limbs = [_flynn.dask.feature_sum_limbs(X32[a:b]) for a, b in [(0, 7), (7, 900), (900, None)]]
    assert all(part.max() < 2**32 for part in limbs)
    centres, scales = _flynn.dask.feature_stats_from_limbs(np.sum(limbs, axis=0, dtype=np.uint64),
                                                           64)
    ref = central(X32, y, **PARAMS)
    ref_centres, ref_scales = _flynn.dask.feature_stats(ref._model)
    np.testing.assert_array_equal(centres, ref_centres)
    np.testing.assert_array_equal(scales, ref_scales)
    with pytest.raises(flynn.FlynnError, match="limbs do not describe"):
        _flynn.dask.feature_stats_from_limbs(limbs[0], 63)


def test_count_sums_are_checked_for_overflow():
    big = np.full((2, 3), 2**32 - 2, dtype=np.uint32)
    rows = np.array([5, 6], dtype=np.uint64)
    counts, total_rows = _flynn.dask.sum_counts([(big, rows), (np.ones((2, 3), np.uint32), rows)])
    assert counts.dtype == np.uint32 and counts.max() == 2**32 - 1
    np.testing.assert_array_equal(total_rows, [10, 12])
    with pytest.raises(flynn.FlynnError, match="count overflow: class 0 unit 0"):
        _flynn.dask.sum_counts([(big, rows), (big, rows)])


def test_missing_dask_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match="flynn.dask needs Dask.*python3-dask"):
        flynn.dask.fit(None, None)
