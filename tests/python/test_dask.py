"""flynn.dask: training on Dask partitions equals central training, byte for byte, and
prediction on the workers equals central prediction. Runs on a distributed.LocalCluster of
3 worker processes bound to 127.0.0.1 (the workers import the installed package).

Skipped when Dask is not installed, except under FLYNN_REQUIRE_DASK=1 (scripts/test.sh),
where a missing Dask fails the run."""
import json
import os
import subprocess
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


def calibrate_as_fit(clf, X, y):
    """The calibration fit() adds to partial_fit's counts (the one flynn.dask.fit fits): the
    leave-one-out loss sums of the rows, then the candidate of least loss."""
    ids = np.searchsorted(clf.classes_, np.asarray(y, dtype=clf.classes_.dtype))
    clf._model.calibrate_from_losses(*clf._model.calibration_loss(np.asarray(X, np.float32),
                                                                   ids.astype(np.uint32), len(X)))


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


def test_pairs_fit_is_byte_identical(client, table):
    """Second-order filters: the partitions' count tables hold m + 8m cells per class, and
    their tree sum is central training's model."""
    X, y = table
    Xd = da.from_array(X, chunks=(ROW_CHUNKS, 64))
    yd = da.from_array(y, chunks=(ROW_CHUNKS,))
    clf = flynn.dask.fit(Xd, yd, pairs=2, **PARAMS)
    ref = central(X, y, pairs=2, **PARAMS)
    assert clf.config_["pairs"] == 2
    assert clf.to_bytes() == ref.to_bytes()


def test_value_transform_fit_is_byte_identical(client, table):
    """A value transform: every partition sums the transformed values (feature_sum_limbs under
    the model's transform), so the statistics and the model are central training's."""
    X, y = table
    X = np.abs(X) * 40
    Xd = da.from_array(X, chunks=(ROW_CHUNKS, 64))
    yd = da.from_array(y, chunks=(ROW_CHUNKS,))
    clf = flynn.dask.fit(Xd, yd, value_transform="log1p", **PARAMS)
    ref = central(X, y, value_transform="log1p", **PARAMS)
    assert clf.config_["value_transform"] == "log1p"
    assert clf.to_bytes() == ref.to_bytes()
    assert clf.to_bytes() != central(X, y, **PARAMS).to_bytes()


def test_the_paper_half_rule_decides_from_all_partitions(client, table):
    """A column loud in the first partitions' rows only: the pooled statistics put the rows'
    energy in fewer than 16 columns, so the default variant's second half standardises, as
    in central training, although most partitions alone would keep the raw half."""
    X, y = table
    X = X.copy()
    X[:500, 5] = (X[:500, 5] + 3) * 5000
    Xd = da.from_array(X, chunks=(ROW_CHUNKS, 64))
    yd = da.from_array(y, chunks=(ROW_CHUNKS,))
    clf = flynn.dask.fit(Xd, yd, **PARAMS)
    ref = central(X, y, **PARAMS)
    assert clf.config_["paper_half_min_columns"] == 16
    assert clf.to_bytes() == ref.to_bytes()
    assert ref.to_bytes() != central(X, y, paper_half_min_columns=0, **PARAMS).to_bytes()


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
    calibrate_as_fit(ref, X, names)
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


def with_missing_cells(X):
    """X (float32) with NaN cells in several partitions of ROW_CHUNKS: scattered ones, a
    column missing through the whole of partition 4, and column 5 missing everywhere (its
    mean is then 0, as flynn's)."""
    X = X.astype(np.float32)
    rng = np.random.default_rng(3)
    X[rng.random(X.shape) < 0.02] = np.nan
    X[621:954, 9] = np.nan
    X[:, 5] = np.nan
    return X


@pytest.mark.parametrize("missing,variant", [("mean", None), ("mean", "paper"), ("zero", None)])
def test_named_dataframe_with_missing_cells_is_byte_identical(client, table, missing, variant):
    X, y = table
    df = pd.DataFrame(with_missing_cells(X), columns=[f"px{j}" for j in range(64)])
    # A nullable integer column whose pd.NA is a missing cell, as at fit.
    df["px3"] = pd.array(np.where(np.isnan(df["px3"]), None, df["px3"].fillna(0).astype(int)),
                         dtype="Int64")
    df["digit"] = y
    ddf = frame_parts(df, ROW_CHUNKS)
    params = dict(PARAMS, variant=variant, missing=missing)
    clf = flynn.dask.fit(ddf, "digit", **params)
    ref = central(df.drop(columns=["digit"]), df["digit"], **params)
    assert clf.to_bytes() == ref.to_bytes()
    table_ = clf.table_
    assert table_.column_names == [f"px{j}" for j in range(64)]
    assert table_.label_name == "digit"
    assert len(table_.fill) == (64 if missing == "mean" else 0)
    if missing == "mean":
        assert table_.fill[5] == 0.0 and table_.fill[9] != 0.0
    features = ddf.drop(columns=["digit"])
    got = flynn.dask.predict(clf, features).compute()
    np.testing.assert_array_equal(got.to_numpy(), ref.predict(df.drop(columns=["digit"])))
    # label_name overrides the Series' name, as at fit.
    renamed = flynn.dask.fit(features, ddf["digit"], label_name="class", **params)
    assert renamed.to_bytes() == central(df.drop(columns=["digit"]), df["digit"],
                                         label_name="class", **params).to_bytes()


def test_named_dataframe_without_missing_cells_stores_the_means(client, table):
    """Under missing="mean" a named table stores its means as fill values even when no
    cell is missing (as flynn train does): a reduction whatever the variant or classes."""
    X, y = table
    df = pd.DataFrame(X, columns=[f"px{j}" for j in range(64)])
    ys = pd.Series(y, name="digit")
    ddf = dd.from_pandas(df, npartitions=5)
    yd = dd.from_pandas(ys, npartitions=5)
    clf = flynn.dask.fit(ddf, yd, classes=range(10), variant="paper", **PARAMS)
    ref = flynn.FlyNNClassifier(variant="paper", **PARAMS).partial_fit(df, ys, classes=range(10))
    calibrate_as_fit(ref, X, y)
    assert clf.to_bytes() == ref.to_bytes()
    assert len(clf.table_.fill) == 64
    # Integer column names are no names (positional), as at fit: no schema without NaN.
    unnamed = flynn.dask.fit(dd.from_pandas(pd.DataFrame(X), npartitions=3),
                             dd.from_pandas(pd.Series(y), npartitions=3), **PARAMS)
    assert unnamed.table_ is None
    assert unnamed.to_bytes() == central(pd.DataFrame(X), y, **PARAMS).to_bytes()


@pytest.mark.parametrize("missing", ["mean", "zero"])
def test_array_with_missing_cells_is_byte_identical(client, table, missing):
    X, y = table
    Xm = with_missing_cells(X)
    Xd = da.from_array(Xm, chunks=(ROW_CHUNKS, 64))
    yd = da.from_array(y, chunks=(ROW_CHUNKS,))
    clf = flynn.dask.fit(Xd, yd, missing=missing, **PARAMS)
    ref = central(Xm, y, missing=missing, **PARAMS)
    assert clf.to_bytes() == ref.to_bytes()
    # Positional: a schema only for the fill values (mean), none under zero.
    assert (clf.table_ is not None) == (missing == "mean")
    assert clf.table_ is None or not clf.table_.named
    np.testing.assert_array_equal(flynn.dask.predict(clf, Xd).compute(), ref.predict(Xm))


def test_named_dataframe_with_missing_cells_gives_flynn_trains_model(client, cli, tmp_path):
    """The door the model file opens: flynn train on the CSV of the same table writes the
    same bytes, and flynn predict (matching the columns by name) the same labels."""
    rng = np.random.default_rng(5)
    n = 400
    # Multiples of 1/8: pandas' CSV text parses back to the same float32.
    df = pd.DataFrame({name: np.round(rng.normal(0, 4, n) * 8) / 8
                       for name in ["weight", "height", "age", "dose", "score"]})
    df = df.mask(rng.random(df.shape) < 0.1)
    y = np.where(df["weight"].fillna(0) + df["dose"].fillna(1) > 0.5, "good", "bad")
    df["quality"] = y
    df.to_csv(tmp_path / "train.csv", index=False)
    hyper = ["--m", "2048", "--s", "3", "--rho", "32", "--gamma", "0.7", "--seed", "11"]
    subprocess.run([cli, "train", "--data", tmp_path / "train.csv", "--model",
                    tmp_path / "cli.flynn", "--header", "yes", "--quiet", *hyper], check=True)
    ddf = frame_parts(df, (150, 0, 1, 249))
    clf = flynn.dask.fit(ddf, "quality", m=2048, s=3, rho=32, gamma=0.7, seed=11)
    assert clf.to_bytes() == (tmp_path / "cli.flynn").read_bytes()
    # Columns in another order: flynn predict matches them by name.
    queries = df.drop(columns=["quality"])[["score", "age", "weight", "height", "dose"]]
    queries.to_csv(tmp_path / "query.csv", index=False)
    out = subprocess.run([cli, "predict", "--model", tmp_path / "cli.flynn", "--data",
                          tmp_path / "query.csv", "--quiet", "--json"], check=True,
                         capture_output=True, text=True)
    got = flynn.dask.predict(clf, ddf.drop(columns=["quality"])).compute()
    assert list(got) == json.loads(out.stdout)["predictions"]


def test_missing_error_and_infinite_cells_name_partition_row_and_column(client, table):
    X, y = table
    X = X.copy()
    X[625, 7] = np.nan  # partition 4 (rows 621..953), its row 4
    Xd = da.from_array(X, chunks=(ROW_CHUNKS, 64))
    yd = da.from_array(y, chunks=(ROW_CHUNKS,))
    with pytest.raises(ValueError, match=r"partition 4, row 4, column 7: nan: missing value "
                                         r"\(missing='error'"):
        flynn.dask.fit(Xd, yd, missing="error", **PARAMS)
    with pytest.raises(ValueError, match=r"partition 4, row 4, column 7: nan: missing value"):
        flynn.dask.fit(Xd, yd, missing="error", variant="paper", classes=range(10), **PARAMS)
    X[954, 2] = np.inf  # partition 5, its row 0
    Xd = da.from_array(X, chunks=(ROW_CHUNKS, 64))
    with pytest.raises(ValueError, match=r"partition 5, row 0, column 2: inf: infinite value"):
        flynn.dask.fit(Xd, yd, **PARAMS)
    with pytest.raises(ValueError, match=r"missing='bogus': expected one of"):
        flynn.dask.fit(Xd, yd, missing="bogus")


def test_column_names_the_model_file_cannot_hold_are_refused(client):
    df = pd.DataFrame(np.arange(12.0).reshape(4, 3), columns=["a", "b", "a"])
    df["y"] = [0, 1, 0, 1]
    with pytest.raises(ValueError, match=r"column name\(s\) \['a'\] appear more than once"):
        flynn.dask.fit(dd.from_pandas(df, npartitions=2), "y")
    df = pd.DataFrame({"a": [1.0, 2, 3, 4], "y": [0, 1, 0, 1]})
    with pytest.raises(ValueError, match=r"label_name='a' is also the name of a feature"):
        flynn.dask.fit(dd.from_pandas(df, npartitions=2), "y", label_name="a")


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
    # bool too: FlyNNClassifier.fit encodes a bool column as text ('False'/'True' one-hot).
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "colour": ["r", "g", "b", "r"],
                       "kind": pd.Categorical(["x", "y", "x", "y"]),
                       "flag": [True, False, True, True], "y": [0, 1, 0, 1]})
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(TypeError, match=r"column\(s\) 'colour' \(object\), 'kind' \(category\), "
                                        r"'flag' \(bool\) are not numeric: FlyNNClassifier.fit "
                                        r"would one-hot encode them"):
        flynn.dask.fit(ddf, "y")


def test_feature_sum_limbs_add_up_to_the_central_statistics(table):
    """The exact reduction itself: limbs of any split, summed, give the statistics fit
    computes on all rows (bit for bit)."""
    X, y = table
    X32 = X.astype(np.float32) * np.float32(1.37) - np.float32(4.1)  # negative values too
    for transform in ["none", "sqrt", "log1p"]:
        limbs = [_flynn.dask.feature_sum_limbs(X32[a:b], transform) for a, b in [(0, 7), (7, 900), (900, None)]]
        assert all(part.max() < 2**32 for part in limbs)
        centres, scales = _flynn.dask.feature_stats_from_limbs(np.sum(limbs, axis=0, dtype=np.uint64),
                                                               64, transform)
        ref = central(X32, y, value_transform=transform, **PARAMS)
        ref_centres, ref_scales = _flynn.dask.feature_stats(ref._model)
        np.testing.assert_array_equal(centres, ref_centres)
        np.testing.assert_array_equal(scales, ref_scales)
    with pytest.raises(flynn.FlynnError, match="limbs do not describe"):
        _flynn.dask.feature_stats_from_limbs(limbs[0], 63, "none")
    with pytest.raises(flynn.FlynnError, match="value_transform: 'exp' is not one of"):
        _flynn.dask.feature_sum_limbs(X32, "exp")


def test_imputation_sum_limbs_add_up_to_the_central_fill_values(table):
    """The first pass's second reduction: imputation limbs of any split, summed and
    completed, give the schema (fill values) central fit stores, bit for bit."""
    X, y = table
    Xm = with_missing_cells(X) * np.float32(-2.3)
    limbs = [_flynn.dask.imputation_sum_limbs(Xm[a:b]) for a, b in [(0, 1), (1, 700), (700, None)]]
    assert all(part.max() < 2**32 for part in limbs)
    total = np.sum(limbs, axis=0, dtype=np.uint64)
    assert _flynn.dask.missing_cells(total, 64) == np.isnan(Xm).sum()
    ref = central(Xm, y, **PARAMS)
    _, _, probe = ref._training_rows(np.full((1, 64), np.nan, np.float32), [0], reset=True)
    schema = _flynn.dask.completed_schema(probe, total, 64)
    assert schema == ref.table_
    filled = _flynn.dask.fill_missing_cells(Xm, np.asarray(schema.fill, np.float32))
    assert not np.isnan(filled).any()
    np.testing.assert_array_equal(filled[~np.isnan(Xm)], Xm[~np.isnan(Xm)])
    with pytest.raises(flynn.FlynnError, match="limbs do not describe"):
        _flynn.dask.completed_schema(probe, total, 63)


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
