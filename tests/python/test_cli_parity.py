"""The Python package and the CLI are one implementation: same data, labels and seed give
byte-identical model files and equal predictions, and each reads the other's files."""
import json
import subprocess

import numpy as np
import pytest

import flynn
from conftest import probabilities_of


def write_csv(path, X, y=None):
    """CSV as the CLI reads it: features, then the label; float32 values printed with 9
    significant digits, which round-trips them exactly."""
    with open(path, "w") as f:
        for i, row in enumerate(X):
            cells = ["%.9g" % v for v in row.astype(np.float32)]
            if y is not None:
                cells.append(str(y[i]))
            f.write(",".join(cells) + "\n")


def run(cli, *args):
    return subprocess.run([cli, *args], check=True, capture_output=True, text=True).stdout


def cli_predict(cli, model, data):
    out = json.loads(run(cli, "predict", "--model", str(model), "--data", str(data), "--quiet",
                         "--json", "--label-col", "none"))
    return out["predictions"]


@pytest.mark.parametrize("kind", ["pixels", "floats"])
def test_model_bytes_and_predictions_equal_the_cli(cli, digits_split, tmp_path, kind):
    Xtr, ytr, Xte, _ = digits_split
    if kind == "floats":  # non-integer rows take the float kernel, not the integer one
        rng = np.random.default_rng(0)
        Xtr = (Xtr / 16 + rng.normal(0, 0.05, Xtr.shape)).astype(np.float32)
        Xte = (Xte / 16 + rng.normal(0, 0.05, Xte.shape)).astype(np.float32)
    write_csv(tmp_path / "train.csv", Xtr, ytr)
    write_csv(tmp_path / "test.csv", Xte)
    run(cli, "train", "--data", str(tmp_path / "train.csv"), "--model", str(tmp_path / "cli.flynn"),
        "--seed", "7", "--gamma", "0.6", "--quiet")

    clf = flynn.FlyNNClassifier(seed=7, gamma=0.6).fit(Xtr, ytr)
    cli_bytes = (tmp_path / "cli.flynn").read_bytes()
    assert clf.to_bytes() == cli_bytes
    clf.save(tmp_path / "py.flynn")
    assert (tmp_path / "py.flynn").read_bytes() == cli_bytes

    predicted = [str(p) for p in clf.predict(Xte)]
    assert predicted == cli_predict(cli, tmp_path / "cli.flynn", tmp_path / "test.csv")
    assert predicted == cli_predict(cli, tmp_path / "py.flynn", tmp_path / "test.csv")


def test_cli_and_package_probabilities_are_equal(cli, digits_split, tmp_path, small_params):
    """`flynn predict --proba` and predict_proba are both the library's
    FlyNN::predict_proba: softmax(-score / (rho * t)) mixed with the priors (n_l + 1)/(n + L)
    at the model's prior weight, its calibration fitted at training (flynn/scoring.hpp).
    Recomputed from the package's scores, they match the CLI's to its 6 significant digits."""
    Xtr, ytr, Xte, _ = digits_split
    write_csv(tmp_path / "train.csv", Xtr, ytr)
    write_csv(tmp_path / "test.csv", Xte[:50])
    clf = flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr)
    clf.save(tmp_path / "py.flynn")
    out = run(cli, "predict", "--model", str(tmp_path / "py.flynn"), "--data",
              str(tmp_path / "test.csv"), "--label-col", "none", "--proba", "--quiet")
    lines = out.strip().splitlines()
    assert lines[0].split(",")[2:] == [f"p_{c}" for c in clf.classes_]
    cli_proba = np.array([[float(v) for v in line.split(",")[2:]] for line in lines[1:]])

    scores = clf.scores(Xte[:50])
    _, rows = clf._model.counts()
    np.testing.assert_allclose(probabilities_of(scores, rows, clf.config_["rho"], clf.calibration_), cli_proba,
                               rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(clf.predict_proba(Xte[:50]), cli_proba, rtol=1e-5, atol=1e-9)


def test_load_reads_cli_models_with_string_labels(cli, tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 10)).astype(np.float32)
    y = np.where(X[:, 0] + X[:, 1] > 0, "yes", "no")
    write_csv(tmp_path / "train.csv", X, y)
    run(cli, "train", "--data", str(tmp_path / "train.csv"), "--model", str(tmp_path / "m.flynn"),
        "--quiet")
    loaded = flynn.load(tmp_path / "m.flynn")
    assert list(loaded.classes_) == ["no", "yes"]
    assert loaded.n_features_in_ == 10
    fitted = flynn.FlyNNClassifier().fit(X, y)
    assert loaded.to_bytes() == fitted.to_bytes()
    assert loaded.get_params() == {**fitted.get_params(), **{k: fitted.config_[k] for k in
                                   ("m", "s", "rho", "gamma", "seed", "preprocess", "variant",
                                                                  "filter_scoring", "pairs",
                                                                  "paper_half_min_columns",
                                                                  "value_transform")}}
    np.testing.assert_array_equal(loaded.predict(X), fitted.predict(X))
    # Integer class names come back as integers.
    write_csv(tmp_path / "int.csv", X, (X[:, 0] > 0).astype(int) * 10 + 2)
    run(cli, "train", "--data", str(tmp_path / "int.csv"), "--model", str(tmp_path / "i.flynn"),
        "--quiet")
    assert list(flynn.load(tmp_path / "i.flynn").classes_) == [2, 12]


def test_load_rejects_a_corrupt_file_with_a_clear_error(tmp_path, digits_split, small_params):
    Xtr, ytr, _, _ = digits_split
    data = bytearray(flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr).to_bytes())
    data[40] ^= 0xFF
    (tmp_path / "bad.flynn").write_bytes(bytes(data))
    with pytest.raises(flynn.FlynnError, match="checksum"):
        flynn.load(tmp_path / "bad.flynn")
    (tmp_path / "text.flynn").write_text("hello")
    with pytest.raises(ValueError, match="not a flynn model file|truncated"):
        flynn.load(tmp_path / "text.flynn")
    with pytest.raises(ValueError, match="cannot open"):
        flynn.load(tmp_path / "missing.flynn")


def test_auto_chooses_and_trains_as_train_auto(cli, digits_split, tmp_path):
    """auto=True runs the library's choice that `flynn train --auto` runs: same rows, same
    choice, same model bytes; and the chosen parameters given explicitly give that model."""
    Xtr, ytr, _, _ = digits_split
    Xtr, ytr = Xtr[:400], ytr[:400]
    write_csv(tmp_path / "train.csv", Xtr, ytr)
    out = json.loads(run(cli, "train", "--auto", "--data", str(tmp_path / "train.csv"), "--model",
                         str(tmp_path / "cli.flynn"), "--quiet", "--json"))
    clf = flynn.FlyNNClassifier(auto=True, n_jobs=1).fit(Xtr, ytr)
    assert clf.auto_["chosen"] == out["auto"]["chosen"]
    assert clf.auto_["gamma"] == out["auto"]["gamma"]
    assert set(clf.auto_["cv"]) == set(out["auto"]["cv"])
    assert clf.to_bytes() == (tmp_path / "cli.flynn").read_bytes()
    params = {k: v for k, v in clf.config_.items() if k not in ("n_features", "class_weight")}
    assert flynn.FlyNNClassifier(**params).fit(Xtr, ytr).to_bytes() == clf.to_bytes()
    with pytest.raises(ValueError, match="partial_fit"):
        flynn.FlyNNClassifier(auto=True).partial_fit(Xtr, ytr)
