"""class_weight from Python: scikit-learn's forms (None, "balanced", a dict), the
same model as `flynn train --class-weight`, exact under merge, and what it is for: the
minority class of an imbalanced table is predicted again."""
import subprocess

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score

import flynn
from conftest import same_counts


def imbalanced(seed=0, minority=40):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0.0, 1.0, size=(800, 6)), rng.normal(0.9, 1.0, size=(2 * minority, 6))])
    y = np.array(["no"] * 800 + ["yes"] * (2 * minority))
    order = rng.permutation(len(y))
    return X[order], y[order]


def test_balanced_weights_raise_balanced_accuracy_on_held_out_rows():
    X, y = imbalanced()
    half = len(y) // 2
    scores = {}
    for cw in (None, "balanced"):
        clf = flynn.FlyNNClassifier(class_weight=cw, n_jobs=1).fit(X[:half], y[:half])
        scores[cw] = balanced_accuracy_score(y[half:], clf.predict(X[half:]))
    assert scores["balanced"] > scores[None] + 0.05, scores


def test_dict_and_text_forms_give_the_clis_model(cli, tmp_path):
    X, y = imbalanced(1)
    data = tmp_path / "rows.csv"
    with open(data, "w") as f:
        for row, label in zip(X, y):
            f.write(",".join(f"{v:.6f}" for v in row) + f",{label}\n")
    model = tmp_path / "m.flynn"
    subprocess.run([cli, "train", "--data", data, "--model", model, "--quiet", "--class-weight",
                    "yes=4.5"], check=True)
    from_dict = flynn.fit_file(data, n_jobs=1, class_weight="yes=4.5").to_bytes()
    assert from_dict == model.read_bytes()
    clf = flynn.FlyNNClassifier(class_weight={"yes": 4.5}).fit(*imbalanced(1))
    assert clf.config_["class_weight"] == "yes=4.5"
    back = flynn.FlyNNClassifier.from_bytes(clf.to_bytes())
    assert back.get_params()["class_weight"] == "yes=4.5"
    np.testing.assert_array_equal(back.predict(X), clf.predict(X))


def test_merge_of_parts_equals_the_whole_with_balanced_weights():
    X, y = imbalanced(2)
    whole = flynn.FlyNNClassifier(class_weight="balanced", n_jobs=1).fit(X, y)
    a = flynn.FlyNNClassifier(class_weight="balanced", n_jobs=1, variant="paper")
    b = flynn.FlyNNClassifier(class_weight="balanced", n_jobs=1, variant="paper")
    paper = flynn.FlyNNClassifier(class_weight="balanced", n_jobs=1, variant="paper").fit(X, y)
    a.fit(X[::2], y[::2])
    b.fit(X[1::2], y[1::2])
    a.merge(b)
    assert same_counts(a, paper)  # the merged model keeps a's calibration
    np.testing.assert_array_equal(a.scores(X), paper.scores(X))
    assert whole.config_["class_weight"] == "balanced"


def test_bad_class_weights_are_clear_errors():
    X, y = imbalanced(3)
    with pytest.raises(ValueError, match="'maybe' is not a class of the model"):
        flynn.FlyNNClassifier(class_weight={"maybe": 2}).fit(X, y)
    with pytest.raises(ValueError, match="not a finite positive number"):
        flynn.FlyNNClassifier(class_weight={"yes": -1}).fit(X, y)
    with pytest.raises(TypeError, match="expected a number"):
        flynn.FlyNNClassifier(class_weight={"yes": "x"}).fit(X, y)
    with pytest.raises(TypeError, match="expected None, 'balanced' or a dict"):
        flynn.FlyNNClassifier(class_weight=3).fit(X, y)


def test_tune_maximises_the_metric_it_is_given():
    X, y = imbalanced(4)
    search = flynn.tune(X, y, budget=3, cv=3, seed=1, scoring="balanced_accuracy",
                        class_weight="balanced", n_jobs=1)
    assert search.scoring == "balanced_accuracy"
    assert search.best_score_ == pytest.approx(search.best_balanced_accuracy_)
    assert search.best_score_ == pytest.approx(search.best_fold_scores_.mean())
    assert search.best_params_["class_weight"] == "balanced"
    assert search.best_log_loss_ is None
    with pytest.raises(ValueError, match="expected accuracy, balanced_accuracy, macro_f1 or log_loss"):
        flynn.tune(X, y, budget=1, cv=3, scoring="auc")


def test_tune_by_log_loss_scores_like_neg_log_loss():
    # scoring="log_loss" minimises the calibrated out-of-fold log-loss; best_score_ is minus
    # it (scikit-learn's neg_log_loss), the refit model carries the fitted temperature, and its
    # probabilities on the training rows beat the uniform guess.
    X, y = imbalanced(4)
    search = flynn.tune(X, y, budget=3, cv=3, seed=1, scoring="log_loss", n_jobs=1)
    assert search.scoring == "log_loss"
    assert search.best_log_loss_ > 0
    assert search.best_score_ == pytest.approx(-search.best_log_loss_)
    assert search.best_score_ == pytest.approx(search.best_fold_scores_.mean())
    assert (search.best_fold_scores_ < 0).all()
    assert search.best_log_loss_ == pytest.approx(search.calibration_["out_of_fold_log_loss"], abs=0.05)
    assert search.temperature_ == search.calibration_["temperature"]
    model = search.best_estimator_
    p = model.predict_proba(X)
    true = p[np.arange(len(y)), np.searchsorted(model.classes_, y)]
    assert -np.log(np.maximum(true, 1e-15)).mean() < np.log(len(model.classes_))
