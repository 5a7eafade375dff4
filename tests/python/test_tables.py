"""Tables in Python as the CLI reads them: missing values, text and categorical columns,
column names. Each case is checked against `flynn train` / `flynn predict` on the CSV of the
same table (written by pandas): byte-identical model files, equal predictions.

Numbers: the CLI parses decimal text to the nearest float32, Python rounds a float64 to the
nearest float32; the two agree whenever the decimal text is the float64's shortest repr
(what pandas writes) and the value is exactly a float32, so the tables here hold
multiples of 1/8."""
import json
import pickle
import subprocess

import numpy as np
import pandas as pd
import pytest

import flynn

HYPER = dict(m=2048, s=3, rho=32, gamma=0.7, seed=11)
CLI_HYPER = ["--m", "2048", "--s", "3", "--rho", "32", "--gamma", "0.7", "--seed", "11"]


def run(cli, *args, check=True):
    return subprocess.run([cli, *map(str, args)], check=check, capture_output=True, text=True)


def cli_train(cli, csv, model, *flags):
    run(cli, "train", "--data", csv, "--model", model, "--header", "yes", "--quiet",
        *CLI_HYPER, *flags)
    return model.read_bytes()


def cli_predict(cli, model, csv, *flags):
    out = run(cli, "predict", "--model", model, "--data", csv, "--quiet", "--json", *flags)
    return json.loads(out.stdout)["predictions"]


def mixed_table(n, seed, unseen=False):
    """A table of every column kind: float with missing cells, int, text (object) with
    missing cells, category, bool; labels from its columns, so the model has something to
    learn."""
    rng = np.random.default_rng(seed)
    colors = np.array(["red", "green", "blue"] + (["violet"] if unseen else []))
    color = colors[rng.integers(0, len(colors), n)].astype(object)
    color[rng.random(n) < 0.1] = None
    size = pd.Categorical(rng.choice(["S", "M", "L"], n), categories=["S", "M", "L", "XL"])
    X = pd.DataFrame({
        "weight": np.round(rng.normal(0, 4, n) * 8) / 8,
        "count": rng.integers(0, 20, n),
        "color": color,
        "size": size,
        "fresh": rng.random(n) < 0.5,
    })
    X.loc[rng.random(n) < 0.1, "weight"] = np.nan
    score = X["weight"].fillna(0) + 3 * (X["color"] == "red") - 2 * (X["size"] == "L") + X["fresh"]
    y = pd.Series(np.where(score > 0.5, "good", "bad"), name="quality")
    return X, y


def write_table(path, X, y=None):
    """The CSV of the table as pandas writes it (the label, if any, as the last column)."""
    (X if y is None else X.assign(**{y.name: y})).to_csv(path, index=False)
    return path


# ---- missing values -------------------------------------------------------------------


def nan_rows(n, seed, d=6):
    rng = np.random.default_rng(seed)
    X = (np.round(rng.normal(0, 3, (n, d)) * 8) / 8).astype(np.float32)
    X[rng.random((n, d)) < 0.08] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) > 0).astype(int)
    return X, y


def write_rows(path, X, y=None):
    """A headerless CSV: '%.9g' of each float32 (exact), an empty cell for NaN."""
    with open(path, "w") as f:
        for i, row in enumerate(X):
            cells = ["" if np.isnan(v) else "%.9g" % v for v in row]
            if y is not None:
                cells.append(str(y[i]))
            f.write(",".join(cells) + "\n")
    return path


@pytest.mark.parametrize("missing", ["mean", "zero"])
def test_nan_in_arrays_is_filled_as_the_cli_fills_missing_cells(cli, tmp_path, missing):
    X, y = nan_rows(300, 1)
    Xt, _ = nan_rows(80, 2)
    write_rows(tmp_path / "train.csv", X, y)
    write_rows(tmp_path / "test.csv", Xt)
    run(cli, "train", "--data", tmp_path / "train.csv", "--model", tmp_path / "cli.flynn",
        "--quiet", "--missing", missing, *CLI_HYPER)
    clf = flynn.FlyNNClassifier(**HYPER, missing=missing).fit(X, y)
    assert clf.to_bytes() == (tmp_path / "cli.flynn").read_bytes()
    if missing == "mean":
        # The training means are in the model (an unnamed table schema) and fill at prediction.
        assert clf.table_ is not None and not clf.table_.named
        means = np.nanmean(X.astype(np.float64), axis=0)
        np.testing.assert_allclose(clf.table_.fill, means, rtol=1e-6)
    else:
        assert clf.table_ is None  # nothing to remember: the format-2 file of old
    predicted = [str(p) for p in clf.predict(Xt)]
    assert predicted == cli_predict(cli, tmp_path / "cli.flynn", tmp_path / "test.csv",
                                    "--label-col", "none", "--missing", missing)
    # Filling first gives the same rows.
    if missing == "mean":
        filled = np.where(np.isnan(Xt), np.asarray(clf.table_.fill, dtype=np.float32), Xt)
        assert list(clf.predict(filled)) == list(clf.predict(Xt))


def test_nan_under_missing_error_names_row_and_column(cli, tmp_path):
    X, y = nan_rows(50, 3)
    r, c = map(int, np.argwhere(np.isnan(X))[0])
    with pytest.raises(ValueError, match=rf"^X:{r + 1}:{c + 1}: missing value 'NaN' "
                                         r"\(--missing error"):
        flynn.FlyNNClassifier(missing="error").fit(X, y)
    write_rows(tmp_path / "train.csv", X, y)
    cli_run = run(cli, "train", "--data", tmp_path / "train.csv", "--model",
                  tmp_path / "m.flynn", "--quiet", "--missing", "error", check=False)
    assert cli_run.returncode != 0
    assert f"train.csv:{r + 1}:{c + 1}: missing value" in cli_run.stderr
    # Prediction: the same policy.
    clean = np.nan_to_num(X)
    clf = flynn.FlyNNClassifier(missing="error").fit(clean, y)
    with pytest.raises(ValueError, match=rf"^X:{r + 1}:{c + 1}: missing value"):
        clf.predict(X)


def test_nan_at_prediction_without_training_means_is_the_clis_error():
    X, y = nan_rows(60, 4)
    clf = flynn.FlyNNClassifier().fit(np.nan_to_num(X), y)  # no missing cell: no means kept
    with pytest.raises(ValueError, match="the model stores no training means"):
        clf.predict(X)
    clf.set_params(missing="zero")
    assert clf.predict(X).shape == (60,)


def test_missing_is_checked():
    X, y = nan_rows(20, 5)
    with pytest.raises(ValueError, match="missing='median'"):
        flynn.FlyNNClassifier(missing="median").fit(np.nan_to_num(X), y)


# ---- text and categorical columns ----------------------------------------------------------


def test_dataframe_with_text_columns_gives_the_clis_model_and_predictions(cli, tmp_path):
    X, y = mixed_table(400, 10)
    Xt, _ = mixed_table(120, 11, unseen=True)  # 'violet' was never seen: an all-zero block
    cli_bytes = cli_train(cli, write_table(tmp_path / "train.csv", X, y), tmp_path / "cli.flynn")
    clf = flynn.FlyNNClassifier(**HYPER).fit(X, y)
    assert clf.to_bytes() == cli_bytes
    schema = clf.table_
    assert schema.named and schema.label_name == "quality"
    assert schema.column_names == ["weight", "count", "color", "size", "fresh"]
    # Categories as the CLI found them in the CSV: sorted, only those that occur.
    assert schema.categories == [[], [], ["blue", "green", "red"], ["L", "M", "S"],
                                 ["False", "True"]]
    assert clf.n_features_in_ == 5 and clf.config_["n_features"] == 2 + 3 + 3 + 2
    assert list(clf.feature_names_in_) == list(X.columns)

    write_table(tmp_path / "test.csv", Xt)
    predicted = [str(p) for p in clf.predict(Xt)]
    assert predicted == cli_predict(cli, tmp_path / "cli.flynn", tmp_path / "test.csv")
    clf.save(tmp_path / "py.flynn")
    assert predicted == cli_predict(cli, tmp_path / "py.flynn", tmp_path / "test.csv")
    # Arrays reach a one-hot model by position (an object array for the text columns).
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        assert [str(p) for p in clf.predict(Xt.to_numpy(dtype=object))] == predicted


def test_string_dtype_and_nullable_columns_read_like_their_csv(cli, tmp_path):
    X, y = mixed_table(200, 12)
    X["color"] = X["color"].astype("string")  # pd.NA for the missing cells
    X["count"] = X["count"].astype("Int64")
    X.loc[3, "count"] = pd.NA
    cli_bytes = cli_train(cli, write_table(tmp_path / "train.csv", X, y), tmp_path / "cli.flynn")
    assert flynn.FlyNNClassifier(**HYPER).fit(X, y).to_bytes() == cli_bytes


def test_text_in_a_numeric_column_is_the_clis_error(cli, tmp_path):
    X, y = mixed_table(60, 13)
    X["weight"] = X["weight"].astype(object)
    X.loc[5, "weight"] = "heavy"
    with pytest.raises(ValueError, match=r"^X:6:1: 'heavy' is not a number \(column 'weight'"):
        flynn.FlyNNClassifier().fit(X, y)
    write_table(tmp_path / "train.csv", X, y)
    cli_run = run(cli, "train", "--data", tmp_path / "train.csv", "--model",
                  tmp_path / "m.flynn", "--quiet", check=False)
    assert cli_run.returncode != 0 and "'heavy' is not a number (column 'weight'" in cli_run.stderr


def test_label_name_is_stored_and_can_be_given(cli, tmp_path):
    X, y = mixed_table(150, 14)
    y_plain = y.to_numpy()  # no name: say it
    cli_bytes = cli_train(cli, write_table(tmp_path / "train.csv", X, y), tmp_path / "cli.flynn")
    assert flynn.FlyNNClassifier(**HYPER, label_name="quality").fit(X, y_plain).to_bytes() == cli_bytes
    unnamed = flynn.FlyNNClassifier(**HYPER).fit(X, y_plain)
    assert unnamed.table_.label_name == "" and unnamed.to_bytes() != cli_bytes
    with pytest.raises(ValueError, match="also the name of a feature column"):
        flynn.FlyNNClassifier(label_name="color").fit(X, y)
    with pytest.raises(ValueError, match=r"column name\(s\) \['color'\] appear more than once"):
        flynn.FlyNNClassifier().fit(X.set_axis(["weight", "color", "color", "size", "fresh"],
                                               axis=1), y)


# ---- column names -----------------------------------------------------------------------------


def test_names_are_in_the_model_file_and_cli_predict_matches_them(cli, tmp_path):
    rng = np.random.default_rng(20)
    X = pd.DataFrame(np.round(rng.normal(0, 2, (300, 5)) * 8) / 8,
                     columns=["a", "b", "c", "d", "e"])
    y = pd.Series((X["a"] - X["c"] > 0).astype(int), name="target")
    cli_bytes = cli_train(cli, write_table(tmp_path / "train.csv", X, y), tmp_path / "cli.flynn")
    clf = flynn.FlyNNClassifier(**HYPER).fit(X, y)
    assert clf.to_bytes() == cli_bytes
    assert clf.table_.named and clf.table_.column_names == list("abcde")
    clf.save(tmp_path / "py.flynn")
    # flynn predict matches the Python model's columns by name: reordered, label included.
    Xt = pd.DataFrame(np.round(rng.normal(0, 2, (90, 5)) * 8) / 8, columns=list("abcde"))
    yt = pd.Series((Xt["a"] - Xt["c"] > 0).astype(int), name="target")
    shuffled = Xt.assign(target=yt)[["e", "target", "c", "a", "d", "b"]]
    shuffled.to_csv(tmp_path / "shuffled.csv", index=False)
    predicted = [str(p) for p in clf.predict(Xt)]
    assert predicted == cli_predict(cli, tmp_path / "py.flynn", tmp_path / "shuffled.csv")


def test_load_of_a_cli_table_model_gives_its_names_and_encoding(cli, tmp_path):
    X, y = mixed_table(300, 21)
    Xt, _ = mixed_table(60, 22, unseen=True)
    cli_train(cli, write_table(tmp_path / "train.csv", X, y), tmp_path / "cli.flynn")
    loaded = flynn.load(tmp_path / "cli.flynn")
    assert list(loaded.feature_names_in_) == list(X.columns)
    assert loaded.n_features_in_ == 5 and loaded.label_name == "quality"
    assert list(loaded.classes_) == ["bad", "good"]
    write_table(tmp_path / "test.csv", Xt)
    assert [str(p) for p in loaded.predict(Xt)] == cli_predict(cli, tmp_path / "cli.flynn",
                                                               tmp_path / "test.csv")
    # scikit-learn's rule for DataFrames: the fit-time columns in the fit-time order.
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        loaded.predict(Xt[list(reversed(Xt.columns))])
    with pytest.raises(ValueError, match="Feature names seen at fit time, yet now missing"):
        loaded.predict(Xt.drop(columns="size"))
    # Refitting a clone learns the same model again from the same table.
    from sklearn.base import clone
    assert clone(loaded).fit(X, y).to_bytes() == loaded.to_bytes()


def test_numeric_dataframe_without_string_names_is_positional(cli, tmp_path):
    X, y = nan_rows(120, 23)
    X = np.nan_to_num(X)
    clf = flynn.FlyNNClassifier(**HYPER).fit(pd.DataFrame(X), y)  # RangeIndex columns
    assert clf.table_ is None
    assert clf.to_bytes() == flynn.FlyNNClassifier(**HYPER).fit(X, y).to_bytes()


# ---- the estimator around tables -------------------------------------------------------------


def test_partial_fit_and_forget_encode_with_the_first_schema():
    X, y = mixed_table(300, 30)
    full = flynn.FlyNNClassifier(**HYPER).fit(X, y)
    part = flynn.FlyNNClassifier(**HYPER).partial_fit(X[:200], y[:200], classes=["bad", "good"])
    part.partial_fit(X[200:], y[200:])
    assert part.table_.categories == full.table_.categories
    # forget removes exactly what partial_fit added (same schema, same fill values).
    before = part.export_counts().counts.copy()
    part.partial_fit(X[:50], y[:50]).forget(X[:50], y[:50])
    assert np.array_equal(part.export_counts().counts, before)
    # Object arrays carry the same table by position.
    rows = X[:50].to_numpy(dtype=object)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        part.partial_fit(rows, y[:50]).forget(rows, y[:50])
    assert np.array_equal(part.export_counts().counts, before)


def test_pickle_keeps_the_table():
    X, y = mixed_table(200, 31)
    clf = flynn.FlyNNClassifier(**HYPER).fit(X, y)
    back = pickle.loads(pickle.dumps(clf))
    assert back.table_ == clf.table_ and back.to_bytes() == clf.to_bytes()
    assert list(back.predict(X)) == list(clf.predict(X))


def test_plain_arrays_keep_the_fast_path_and_tables_do_not():
    X, y = nan_rows(100, 32)
    clean = np.nan_to_num(X)
    assert flynn.FlyNNClassifier().fit(clean, y)._is_ready(clean[:1])
    with_means = flynn.FlyNNClassifier().fit(X, y)  # a schema of fill values, no one-hot
    r = int(np.argwhere(np.isnan(X))[0][0])
    assert with_means._is_ready(clean[:1]) and not with_means._is_ready(X[r:r + 1])
    Xm, ym = mixed_table(100, 33)
    one_hot = flynn.FlyNNClassifier().fit(Xm, ym)
    assert not one_hot._is_ready(np.zeros((1, 5), dtype=np.float32))


def test_tags_tell_the_truth():
    assert flynn.FlyNNClassifier()._get_tags()["allow_nan"]
    assert flynn.FlyNNClassifier(missing="zero")._get_tags()["allow_nan"]
    assert not flynn.FlyNNClassifier(missing="error")._get_tags()["allow_nan"]
    # Text categories are DataFrame columns, not the integer codes scikit-learn's
    # "categorical" X_type stands for (docs/guide/python.md, "Tables").
    assert flynn.FlyNNClassifier()._get_tags()["X_types"] == ["2darray"]


def test_check_estimator_passes_under_missing_error():
    """Without allow_nan, scikit-learn checks that NaN and inf are refused with a message
    naming them; the table encoder's "missing value 'NaN'" does."""
    from sklearn.utils.estimator_checks import check_estimator
    check_estimator(flynn.FlyNNClassifier(missing="error"))


def test_one_hot_growth_is_bounded_as_the_cli_bounds_it(cli, tmp_path):
    """256 categories over 300000 rows would be 76.8M features' values from a 2 MB table:
    refused before anything is encoded (the CLI's bound: 2^26 + the table's size)."""
    n = 300_000
    codes = np.array([f"c{k:03d}" for k in range(256)], dtype=object)
    X = pd.DataFrame({"code": codes[np.arange(n) % 256]})
    y = pd.Series(np.arange(n) % 2, name="label")
    with pytest.raises(ValueError, match="after one-hot encoding the text columns is too large"):
        flynn.FlyNNClassifier().fit(X, y)
    write_table(tmp_path / "wide.csv", X, y)
    cli_run = run(cli, "train", "--data", tmp_path / "wide.csv", "--model", tmp_path / "m.flynn",
                  "--header", "yes", "--quiet", check=False)
    assert cli_run.returncode != 0 and "after one-hot encoding the text columns is too large" \
        in cli_run.stderr


def test_identifier_and_too_many_categories_are_the_clis_errors(cli, tmp_path):
    n = 40
    ids = pd.DataFrame({"x": np.arange(n) / 8, "name": [f"row{k}" for k in range(n)]})
    many = pd.DataFrame({"x": np.arange(600) / 8, "tag": [f"t{k % 300}" for k in range(600)]})
    for X, message in ((ids, "with a different value in every row, like an identifier"),
                       (many, "with more than 256 different values")):
        y = pd.Series(np.arange(len(X)) % 2, name="label")
        with pytest.raises(ValueError, match=message):
            flynn.FlyNNClassifier().fit(X, y)
        write_table(tmp_path / "t.csv", X, y)
        cli_run = run(cli, "train", "--data", tmp_path / "t.csv", "--model", tmp_path / "m.flynn",
                      "--header", "yes", "--quiet", check=False)
        assert cli_run.returncode != 0 and message in cli_run.stderr


def test_bad_tables_give_clear_errors():
    X, y = mixed_table(30, 40)
    bad = X.copy()
    bad.loc[4, "weight"] = np.inf
    with pytest.raises(ValueError, match=r"^X:5:1: infinite value"):
        flynn.FlyNNClassifier().fit(bad, y)
    with pytest.raises(ValueError, match="0 sample"):
        flynn.FlyNNClassifier().fit(X.iloc[:0], y.iloc[:0])
    with pytest.raises(ValueError, match="Complex data not supported"):
        flynn.FlyNNClassifier().fit(X.assign(weight=X["weight"] + 1j), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        flynn.FlyNNClassifier().fit(X, y[:10])
    clf = flynn.FlyNNClassifier().fit(X, y)
    with pytest.raises(ValueError, match=r"^X:5:1: infinite value"):
        clf.predict(bad)
    with pytest.warns(UserWarning, match="X does not have valid feature names"), \
            pytest.raises(ValueError, match="X has 4 features, but FlyNNClassifier is expecting 5"):
        clf.predict(X.iloc[:, :4].to_numpy(dtype=object))
