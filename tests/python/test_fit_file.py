"""flynn.fit_file trains from a data file through the library's streaming trainer, the one
``flynn train`` runs: the same flags give the same model bytes and predictions, and bad
files the CLI's errors."""
import json
import struct
import subprocess

import numpy as np
import pytest

import flynn


def run(cli, *args):
    return subprocess.run([cli, *map(str, args)], check=True, capture_output=True,
                          text=True).stdout


def cli_model(cli, tmp_path, data, *flags):
    """The bytes `flynn train --data data FLAGS` writes."""
    out = tmp_path / "cli.flynn"
    run(cli, "train", "--data", data, "--model", out, "--quiet", *flags)
    return out.read_bytes()


def cli_predictions(cli, model_bytes, tmp_path, data, *flags):
    model = tmp_path / "for_predict.flynn"
    model.write_bytes(model_bytes)
    out = json.loads(run(cli, "predict", "--model", model, "--data", data, "--quiet", "--json",
                         *flags))
    return out["predictions"]


def write_messy_csv(path, rows=120, seed=3):
    """A table with a name header, an id column, two text columns, missing cells ("", NA)
    in numeric columns and a text label: the CLI one-hot encodes the text columns and fills
    the missing cells with the training means."""
    rng = np.random.default_rng(seed)
    lines = ["id,age,colour,size,weight,shape,label"]
    for i in range(rows):
        c = i % 3
        age = "" if i % 9 == 0 else "%.2f" % (20 + 10 * c + rng.normal())
        weight = "NA" if i % 13 == 0 else "%.3f" % (c + rng.normal(0, 0.4))
        colour = ["red", "green", "blue"][(i + c) % 3]
        shape = ["round", "square"][c % 2]
        lines.append(f"r{i},{age},{colour},{rng.integers(0, 5) + c},{weight},{shape},k{c}")
    path.write_text("\n".join(lines) + "\n")


def blobs(rows=150, d=6, seed=5):
    rng = np.random.default_rng(seed)
    y = np.arange(rows) % 3
    X = rng.normal(0, 1, (rows, d)) + 2.0 * y[:, None]
    X[rng.random(X.shape) < 0.3] = 0.0  # exact zeros: sparse LIBSVM entries
    return np.round(X, 3).astype(np.float32), y


def write_arff(path, X, y):
    head = ["@relation blobs"] + [f"@attribute f{j} numeric" for j in range(X.shape[1])]
    head += ["@attribute class {c0,c1,c2}", "@data"]
    body = [",".join("%.9g" % v for v in row) + f",c{label}" for row, label in zip(X, y)]
    path.write_text("\n".join(head + body) + "\n")


def write_libsvm(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            entries = " ".join(f"{j + 1}:{v:.9g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{label} {entries}\n")


def write_idx(images, labels, pixels, y):
    n, h, w = pixels.shape
    images.write_bytes(struct.pack(">IIII", 0x0803, n, h, w) + pixels.astype(np.uint8).tobytes())
    labels.write_bytes(struct.pack(">II", 0x0801, n) + np.asarray(y, np.uint8).tobytes())


HYPER = dict(m=1024, s=4, rho=16, gamma=0.7, seed=11)
HYPER_FLAGS = ["--m", "1024", "--s", "4", "--rho", "16", "--gamma", "0.7", "--seed", "11"]


def test_a_messy_csv_gives_the_cli_model_and_predictions(cli, tmp_path):
    data = tmp_path / "messy.csv"
    write_messy_csv(data)
    expected = cli_model(cli, tmp_path, data, "--id-col", "id", *HYPER_FLAGS)
    clf = flynn.fit_file(data, id_col="id", **HYPER)
    assert clf.to_bytes() == expected
    assert clf.fit_info_["rows"] == 120
    assert list(clf.classes_) == ["k0", "k1", "k2"]
    # The model's table columns (colour and shape are one-hot encoded inside the model).
    assert clf.n_features_in_ == 5
    assert list(clf.feature_names_in_) == ["age", "colour", "size", "weight", "shape"]
    # Python encodes the CSV's rows with the model's schema, as flynn predict does.
    import pandas as pd
    table = pd.read_csv(data, keep_default_na=False, na_values=["", "NA"])
    rows = table.drop(columns=["id", "label"])
    assert [str(p) for p in clf.predict(rows)] == cli_predictions(cli, expected, tmp_path, data)


def test_the_flags_are_the_clis(cli, tmp_path):
    data = tmp_path / "messy.csv"
    write_messy_csv(data)
    expected = cli_model(cli, tmp_path, data, "--ignore-cols", "id,shape", "--missing", "zero",
                         "--labels", "k2,k0,k1", "--variant", "paper", "--header", "yes",
                         "--delimiter", ",", "--m", "512")
    got = flynn.fit_file(data, ignore_cols=["id", "shape"], missing="zero",
                         labels=["k2", "k0", "k1"], variant="paper", header=True,
                         delimiter=",", m=512, n_jobs=1)
    assert got.to_bytes() == expected
    assert list(got.classes_) == ["k2", "k0", "k1"]
    # feature_cols as a CLI string; label_col as a number.
    expected = cli_model(cli, tmp_path, data, "--feature-cols", "2,4-5", "--label-col", "7")
    assert flynn.fit_file(data, feature_cols="2,4-5", label_col=7).to_bytes() == expected


@pytest.mark.parametrize("chunk_rows", [None, 7])
@pytest.mark.parametrize("fmt", ["arff", "libsvm", "csv.gz"])
def test_numeric_formats_give_the_cli_model_and_predictions(cli, tmp_path, fmt, chunk_rows):
    X, y = blobs()
    data = tmp_path / f"blobs.{fmt}"
    if fmt == "arff":
        write_arff(data, X, y)
    elif fmt == "libsvm":
        write_libsvm(data, X, y)
    else:
        import gzip
        with gzip.open(data, "wt") as f:
            for row, label in zip(X, y):
                f.write(",".join("%.9g" % v for v in row) + f",c{label}\n")
    flags = [] if chunk_rows is None else ["--chunk-rows", str(chunk_rows)]
    expected = cli_model(cli, tmp_path, data, *HYPER_FLAGS, *flags)
    clf = flynn.fit_file(data, chunk_rows=chunk_rows, **HYPER)
    assert clf.to_bytes() == expected
    if fmt != "arff":  # (ARFF's attribute names make the CLI's model a table one)
        labels = [f"c{v}" for v in y] if fmt != "libsvm" else y
        assert flynn.FlyNNClassifier(**HYPER).fit(X, labels).to_bytes() == expected
    assert [str(p) for p in clf.predict(X)] == \
        cli_predictions(cli, expected, tmp_path, data, "--label-col", "last")


def test_idx_gives_the_cli_model(cli, tmp_path):
    rng = np.random.default_rng(2)
    y = np.arange(60) % 4
    pixels = rng.integers(0, 40, (60, 5, 4)) + 50 * y[:, None, None]
    images, labels = tmp_path / "img-idx3-ubyte", tmp_path / "lab-idx1-ubyte"
    write_idx(images, labels, pixels, y)
    expected = cli_model(cli, tmp_path, images, "--idx-labels", labels, *HYPER_FLAGS)
    clf = flynn.fit_file(images, idx_labels=labels, **HYPER)
    assert clf.to_bytes() == expected
    X = pixels.reshape(60, 20).astype(np.uint8)
    assert clf.n_features_in_ == 20
    assert flynn.FlyNNClassifier(**HYPER).fit(X, y).to_bytes() == expected
    assert [str(p) for p in clf.predict(X)] == cli_predictions(
        cli, expected, tmp_path, images, "--idx-labels", labels)


def test_a_bad_file_raises_the_clis_error(cli, tmp_path):
    data = tmp_path / "bad.csv"
    data.write_text("a,b,label\n1,2,x\n3,oops,y\n4,5,x\n")
    # The CLI's message, without its "flynn: error: " prefix.
    cli_error = subprocess.run([cli, "train", "--data", data, "--model", tmp_path / "m.flynn",
                                "--missing", "error", "--quiet"], capture_output=True,
                               text=True)
    assert cli_error.returncode != 0
    message = cli_error.stderr.strip().removeprefix("flynn: error: ")
    with pytest.raises(ValueError) as e:
        flynn.fit_file(data, missing="error")
    assert str(e.value) == message
    assert isinstance(e.value, flynn.FlynnError)
    with pytest.raises(ValueError, match="--header: 'maybe' is not one of auto, yes, no"):
        flynn.fit_file(data, header="maybe")
    with pytest.raises(ValueError, match="no such file|cannot open|No such"):
        flynn.fit_file(tmp_path / "missing.csv")


def test_unknown_keywords_are_a_type_error_naming_them(tmp_path):
    data = tmp_path / "x.csv"
    data.write_text("1,2,a\n3,4,b\n")
    with pytest.raises(TypeError, match="'label_column', 'max_rows'"):
        flynn.fit_file(data, label_column="last", max_rows=3)
    with pytest.raises(TypeError, match="feature_cols"):
        flynn.fit_file(data, feature_cols=3.5)


def test_a_signal_handler_that_raises_stops_the_training(tmp_path):
    """Ctrl-C (SIGINT) stops fit_file between chunks: here SIGALRM's handler raises, and
    fit_file ends with its exception long before a full run would have finished."""
    import signal
    import time
    data = tmp_path / "rows.csv"
    X, y = blobs(rows=30_000, d=20)
    with open(data, "w") as f:
        for row, label in zip(X, y):
            f.write(",".join("%.3g" % v for v in row) + f",{label}\n")
    start = time.monotonic()
    flynn.fit_file(data, chunk_rows=500, n_jobs=1)
    full = time.monotonic() - start

    class Stop(Exception):
        pass

    def stop(*_):
        raise Stop()

    previous = signal.signal(signal.SIGALRM, stop)
    try:
        start = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, full / 10)
        with pytest.raises(Stop):
            flynn.fit_file(data, chunk_rows=500, n_jobs=1)
        stopped = time.monotonic() - start
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert stopped < full / 2, (stopped, full)


def test_partial_fit_file_and_forget_file_are_update_and_forget(cli, tmp_path):
    """The library's streaming update and forget (io::learn_file, io::forget_file): in any
    chunk size, the bytes `flynn update` writes, the counts of training on every row at once
    (the table's fill means stay A's), and forgetting B gives A back."""
    X, y = blobs(rows=150)
    write_arff(tmp_path / "a.arff", X[:90], y[:90])
    write_arff(tmp_path / "b.arff", X[90:], y[90:])
    write_arff(tmp_path / "ab.arff", X, y)
    flags = HYPER_FLAGS + ["--variant", "paper", "--labels", "c0,c1,c2"]
    (tmp_path / "a.flynn").write_bytes(cli_model(cli, tmp_path, tmp_path / "a.arff", *flags))
    whole = flynn.FlyNNClassifier.from_bytes(cli_model(cli, tmp_path, tmp_path / "ab.arff", *flags))
    run(cli, "update", "--model", tmp_path / "a.flynn", "--data", tmp_path / "b.arff", "--out",
        tmp_path / "updated.flynn", "--quiet")
    updated = (tmp_path / "updated.flynn").read_bytes()
    for chunk_rows in (1, 7, None):
        model = flynn.load(tmp_path / "a.flynn")
        assert flynn.partial_fit_file(model, tmp_path / "b.arff", chunk_rows=chunk_rows) is model
        assert model.to_bytes() == updated
        for got, expected in zip(model._model.counts(), whole._model.counts()):
            np.testing.assert_array_equal(got, expected)
        flynn.forget_file(model, tmp_path / "b.arff", chunk_rows=chunk_rows)
        assert model.to_bytes() == (tmp_path / "a.flynn").read_bytes()
    model = flynn.load(tmp_path / "a.flynn")
    with pytest.raises(ValueError, match="cannot forget"):
        flynn.forget_file(model, tmp_path / "ab.arff")
    assert model.to_bytes() == (tmp_path / "a.flynn").read_bytes()
    with pytest.raises(TypeError, match="'m'"):
        flynn.partial_fit_file(model, tmp_path / "b.arff", m=64)
