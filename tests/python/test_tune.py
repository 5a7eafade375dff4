"""flynn.tune: the evaluation layer's search from Python."""
import numpy as np
import pytest

import flynn


@pytest.fixture(scope="module")
def search(digits):
    X, y = digits
    return flynn.tune(X, y, budget=3, cv=3, seed=1)


def test_search_object_is_consistent(search, digits):
    X, y = digits
    r = search.cv_results_
    n = len(r["params"])
    assert n > 0 and all(len(v) == n for v in r.values())
    full = r["n_rows"] == len(X)
    assert full.any()
    # best_score_ is the best full-data entry, and its parameters are best_params_, unless
    # the defaults' own configuration (evaluated on the same folds) scored at least as high;
    # then that choice with second-order filters when they scored higher still.
    best = int(np.argmax(np.where(full, r["mean_test_score"], -1)))
    assert r["rank_test_score"][best] == 1
    assert search.best_score_ >= r["mean_test_score"][best] - 1e-12
    chosen = dict(search.best_params_)
    assert chosen["pairs"] == (4 if search.chose_pairs_ else 0)
    assert chosen["value_transform"] == ("log1p" if search.chose_value_transform_ else "none")
    chosen["pairs"] = 0  # the choice before tune's last two candidates
    chosen["value_transform"] = "none"
    if search.kept_default_:
        default = flynn.FlyNNClassifier().fit(X, y).config_
        assert chosen == {k: default[k] for k in chosen}
    else:
        if not (search.chose_pairs_ or search.chose_value_transform_):
            assert search.best_score_ == pytest.approx(r["mean_test_score"][best])
        assert r["params"][best] == chosen
    assert search.best_score_ == pytest.approx(search.best_fold_scores_.mean())
    assert len(search.best_fold_scores_) == search.n_splits_ == 3
    assert set(search.best_params_) == {"m", "s", "rho", "gamma", "seed", "preprocess", "variant",
                                        "class_weight", "filter_scoring", "pairs", "paper_half_min_columns",
                                        "value_transform"}
    # The search's space (cv_results_ holds the searched entries only): m in [2d, 2048d],
    # s in [2, d/2], rho in [8, 256].
    d = X.shape[1]
    for p in r["params"]:
        assert 2 * d <= p["m"] <= 2048 * d and 2 <= p["s"] <= d // 2 and 8 <= p["rho"] <= 256


def test_best_estimator_is_the_refit_best_config_with_the_calibrated_temperature(search, digits):
    X, y = digits
    est = search.best_estimator_
    assert {k: est.config_[k] for k in search.best_params_} == search.best_params_
    plain = flynn.FlyNNClassifier(**search.best_params_).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), plain.predict(X))
    assert search.best_score_ > 0.8
    # The out-of-fold fit is reported as a check (as `flynn tune` does); the model, like every
    # fitted one, fits its calibration on its rows' leave-one-out scores: it is the plain fit.
    cal = search.calibration_
    assert search.temperature_ == cal["temperature"] > 0
    assert search.temperature_ != pytest.approx(cal["default_temperature"])
    assert cal["out_of_fold_log_loss"] <= cal["default_log_loss"]
    assert est.calibration_ == plain.calibration_ and est.calibration_["source"] == "leave-one-out"
    np.testing.assert_array_equal(est.predict_proba(X[:50]), plain.predict_proba(X[:50]))
    np.testing.assert_array_equal(est.export_counts().counts, plain.export_counts().counts)


def test_tune_calibrates_as_the_cli_does(search, digits, cli, tmp_path):
    import json
    import subprocess
    X, y = digits
    data = tmp_path / "digits.csv"
    data.write_text("".join(",".join(str(int(v)) for v in row) + f",{label}\n" for row, label in zip(X, y)))
    out = subprocess.run([cli, "tune", "--data", str(data), "--model", str(tmp_path / "m.model"),
                          "--budget", "3", "--folds", "3", "--fold-seed", "1", "--search-seed", "1",
                          "--header", "no", "--json", "--quiet"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["temperature"] == pytest.approx(search.temperature_, rel=1e-12)
    assert report["calibration"]["heldout_log_loss"] == pytest.approx(
        search.calibration_["heldout_log_loss"], rel=1e-12)


def test_tune_is_deterministic_and_validates(search, digits):
    X, y = digits
    again = flynn.tune(X, y, budget=3, cv=3, seed=1, refit=False)
    assert again.best_params_ == search.best_params_
    np.testing.assert_array_equal(again.cv_results_["mean_test_score"],
                                  search.cv_results_["mean_test_score"])
    assert not hasattr(again, "best_estimator_")
    assert again.temperature_ == search.temperature_
    with pytest.raises(ValueError, match="one class"):
        flynn.tune(X[:20], np.zeros(20), budget=1, cv=2)
    with pytest.raises(ValueError, match="budget"):
        flynn.tune(X, y, budget=0, cv=3)


def test_tune_takes_a_dataframe_as_fit_does():
    """Text columns (one-hot) and missing values, as FlyNNClassifier.fit takes them."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 180
    colour = rng.choice(["red", "green", "blue"], n)
    x = rng.normal(size=n) + (colour == "red") * 2.0
    df = pd.DataFrame({"x": x, "colour": colour, "z": rng.normal(size=n)})
    df.loc[::10, "x"] = np.nan
    df.loc[::13, "colour"] = None
    y = np.where(colour == "red", "a", "b")
    search = flynn.tune(df, y, budget=2, cv=3, seed=0)
    est = search.best_estimator_
    assert list(est.feature_names_in_) == ["x", "colour", "z"]
    plain = flynn.FlyNNClassifier(**search.best_params_).fit(df, y)
    np.testing.assert_array_equal(est.predict(df), plain.predict(df))
    assert (est.predict(df) == y).mean() > 0.8
    with pytest.raises(ValueError):
        flynn.tune(df, y, budget=2, cv=3, missing="error")


def test_time_limit_bounds_the_whole_call(digits):
    import time
    X, y = digits
    t0 = time.monotonic()
    search = flynn.tune(X, y, budget=2000, cv=3, time_limit=3)
    assert time.monotonic() - t0 < 3 + 4
    assert search.time_limited_
    assert hasattr(search, "best_estimator_")
