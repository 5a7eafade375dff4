"""FlyNNClassifier inside scikit-learn's model selection and pipelines."""
import numpy as np
from sklearn.model_selection import GridSearchCV, cross_val_score, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler

import flynn


def test_cross_val_score_matches_a_manual_loop(digits, small_params):
    X, y = digits
    cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=0)
    scores = cross_val_score(flynn.FlyNNClassifier(**small_params), X, y, cv=cv, n_jobs=2)
    manual = [flynn.FlyNNClassifier(**small_params).fit(X[tr], y[tr]).score(X[te], y[te])
              for tr, te in cv.split(X, y)]
    np.testing.assert_array_equal(scores, manual)
    assert scores.mean() > 0.85


def test_grid_search_picks_the_best_gamma(digits, small_params):
    X, y = digits
    params = {k: v for k, v in small_params.items() if k != "gamma"}
    search = GridSearchCV(flynn.FlyNNClassifier(**params), {"gamma": [0.0, 0.5, 0.9]}, cv=3)
    search.fit(X, y)
    means = search.cv_results_["mean_test_score"]
    assert search.best_params_["gamma"] == [0.0, 0.5, 0.9][int(np.argmax(means))]
    assert search.best_estimator_.config_["gamma"] == search.best_params_["gamma"]
    assert search.best_score_ == means.max() > 0.85


def test_pipeline(digits_split, small_params):
    Xtr, ytr, Xte, yte = digits_split
    pipe = make_pipeline(MinMaxScaler(), flynn.FlyNNClassifier(**small_params)).fit(Xtr, ytr)
    direct = flynn.FlyNNClassifier(**small_params).fit(MinMaxScaler().fit(Xtr).transform(Xtr), ytr)
    assert pipe[-1].to_bytes() == direct.to_bytes()
    assert pipe.score(Xte, yte) > 0.85
