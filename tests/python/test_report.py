"""flynn.report: the classification report of the CLI's --report, from Python. Its numbers
against scikit-learn's metrics, its folder and page, and its equality with the CLI's."""
import json
import re
import subprocess

import numpy as np
import pytest
from sklearn import metrics

import flynn


@pytest.fixture(scope="module")
def fitted(digits_split):
    Xtr, ytr, Xte, yte = digits_split
    return flynn.FlyNNClassifier(seed=3).fit(Xtr, ytr), Xte, yte


def ece_15_bins(proba, y_ids):
    """ECE with 15 equal bins of the top-class probability, (b/15, (b+1)/15]."""
    conf = proba.max(axis=1)
    top = proba.argmax(axis=1)
    b = np.clip(np.ceil(conf * 15) - 1, 0, 14).astype(int)
    total = 0.0
    for k in range(15):
        m = b == k
        if m.any():
            total += abs((top[m] == y_ids[m]).sum() - conf[m].sum())
    return total / len(y_ids)


def test_numbers_equal_scikit_learns(fitted):
    clf, X, y = fitted
    rep = flynn.report(clf, X, y)
    pred, proba = clf.predict(X), clf.predict_proba(X)
    labels = list(clf.classes_)
    assert rep.rows_ == len(y) and rep.excluded_rows_ == 0
    assert rep.accuracy_ == pytest.approx(metrics.accuracy_score(y, pred), abs=1e-12)
    assert rep.balanced_accuracy_ == pytest.approx(metrics.balanced_accuracy_score(y, pred), abs=1e-12)
    assert rep.log_loss_ == pytest.approx(metrics.log_loss(y, proba, labels=labels), abs=1e-9)
    np.testing.assert_array_equal(rep.confusion_matrix_, metrics.confusion_matrix(y, pred, labels=labels))
    p, r, f, s = metrics.precision_recall_fscore_support(y, pred, labels=labels, zero_division=0)
    for i, row in enumerate(rep.per_class_):
        assert row["class"] == str(labels[i])
        assert (row["precision"], row["recall"], row["f1"], row["support"]) == pytest.approx((p[i], r[i], f[i], s[i]))
    for avg in ("macro", "weighted"):
        p, r, f, _ = metrics.precision_recall_fscore_support(y, pred, average=avg, zero_division=0)
        got = rep.to_dict()[avg + "_avg"]
        assert (got["precision"], got["recall"], got["f1"]) == pytest.approx((p, r, f))
    ids = np.searchsorted(clf.classes_, y)
    assert rep.ece_ == pytest.approx(ece_15_bins(proba, ids), abs=1e-12)
    assert rep.binary_ is None


def test_two_classes_have_scikit_learns_curves(digits):
    X, y = digits
    keep = (y == 3) | (y == 8)
    X, y = X[keep], y[keep]
    clf = flynn.FlyNNClassifier(seed=1).fit(X[::2], y[::2])
    rep = flynn.report(clf, X[1::2], y[1::2])
    score = clf.predict_proba(X[1::2])[:, 1]
    positive = y[1::2] == clf.classes_[1]
    assert rep.binary_["positive_class"] == "8"
    assert rep.binary_["roc_auc"] == pytest.approx(metrics.roc_auc_score(positive, score), abs=1e-12)
    assert rep.binary_["average_precision"] == pytest.approx(
        metrics.average_precision_score(positive, score), abs=1e-12)
    fpr, tpr, _ = metrics.roc_curve(positive, score, drop_intermediate=False)
    assert rep.binary_["roc"]["false_positive_rate"] == pytest.approx(list(fpr))
    assert rep.binary_["roc"]["true_positive_rate"] == pytest.approx(list(tpr))


def test_unknown_classes_are_left_out_and_counted(fitted):
    clf, X, y = fitted
    y = y.astype(object)
    y[:5] = "zebra"
    rep = flynn.report(clf, X, y)
    assert rep.excluded_rows_ == 5 and rep.rows_ == len(y) - 5


def test_write_gives_the_folder_and_a_page_of_its_numbers(fitted, tmp_path):
    clf, X, y = fitted
    rep = flynn.report(clf, X, y)
    files = rep.write(tmp_path / "r")
    assert files[:2] == ["report.json", "report.html"]
    assert json.loads((tmp_path / "r" / "report.json").read_text()) == rep.to_dict()
    page = (tmp_path / "r" / "report.html").read_text()
    assert page == rep.html() == rep._repr_html_()
    cells = re.findall(r'<td class="n" data-key="([^"]*)">([^<]*)</td>', page)
    assert len(cells) > 100
    data = rep.to_dict()
    for pointer, text in cells:
        value = data
        for part in pointer.strip("/").split("/"):
            value = value[int(part)] if isinstance(value, list) else value[part.replace("~1", "/").replace("~0", "~")]
        if isinstance(value, int):
            assert text == str(value), pointer
        else:
            assert abs(float(text) - value) <= 0.5e-4 + 1e-12, pointer
    assert set(rep.figures()) == {"confusion_matrix.png", "reliability.png"}
    # A folder of other files is refused and left alone.
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(flynn.FlynnError, match="other files"):
        rep.write(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_report_from_predictions(fitted):
    clf, X, y = fitted
    a = flynn.report(clf, X, y).to_dict()
    b = flynn.report_from_predictions(y, clf.predict(X), clf.predict_proba(X), clf.classes_).to_dict()
    for key in ("accuracy", "log_loss", "ece", "per_class", "confusion_matrix", "reliability"):
        assert a[key] == b[key], key


def test_equals_the_clis_report(cli, digits_split, tmp_path):
    """The same model and rows: flynn.report's numbers are flynn predict --report's."""
    from test_cli_parity import write_csv
    Xtr, ytr, Xte, yte = digits_split
    write_csv(tmp_path / "train.csv", Xtr, ytr)
    write_csv(tmp_path / "test.csv", Xte, yte)
    model = tmp_path / "m.flynn"
    subprocess.run([cli, "train", "--data", str(tmp_path / "train.csv"), "--model", str(model), "--quiet"],
                   check=True)
    subprocess.run([cli, "predict", "--model", str(model), "--data", str(tmp_path / "test.csv"), "--out",
                    str(tmp_path / "p.csv"), "--report", str(tmp_path / "cli"), "--quiet"], check=True)
    cli_json = json.loads((tmp_path / "cli" / "report.json").read_text())
    ours = flynn.report(flynn.load(model), Xte.astype(np.float32), yte).to_dict()
    for key in ("rows", "classes", "accuracy", "balanced_accuracy", "ece", "macro_avg", "weighted_avg",
                "per_class", "confusion_matrix", "reliability"):
        assert ours[key] == cli_json[key], key
    assert ours["log_loss"] == pytest.approx(cli_json["log_loss"], abs=1e-12)
