"""FlyNNClassifier itself: input layouts, exact model algebra, pickling, threads, errors."""
import io
import json
import os
import pickle

import joblib
import numpy as np
import pandas as pd
import pytest

import flynn
from conftest import probabilities_of, same_counts


@pytest.fixture()
def fitted(digits_split, small_params):
    Xtr, ytr, _, _ = digits_split
    return flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr)


def test_version_matches_the_cmake_project(repo):
    import re
    cmake = (repo / "CMakeLists.txt").read_text()
    assert flynn.__version__ == re.search(r"project\(flynn VERSION ([0-9.]+)", cmake).group(1)
    pyproject = (repo / "pyproject.toml").read_text()
    assert f'version = "{flynn.__version__}"' in pyproject


def test_build_info_says_which_simd_target_and_kernels_run():
    import subprocess
    import sys
    info = flynn.build_info()
    assert info["version"] == flynn.__version__
    assert info["block_kernels"] is True and info["block_rows"] >= 1
    assert info["simd_target"] and info["simd_target"] in info["cpu_targets"].split()
    assert info["one_row_kernel"] == (info["one_row_kernel_name"] != "none")
    if "AVX2" not in info["cpu_targets"].split():
        return
    # Pinned to AVX2 (read once per process, hence a fresh interpreter): the shuffle kernel.
    code = "import flynn, json; print(json.dumps(flynn.build_info()))"
    env = dict(os.environ, FLYNN_SIMD_TARGET="avx2")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                         text=True).stdout
    pinned = json.loads(out)
    assert pinned["simd_target"] == "AVX2" and pinned["simd_pinned"] == "AVX2"
    assert pinned["one_row_kernel_name"] == "byte shuffle (Shuffle16)"


def test_every_input_layout_gives_the_same_model(digits_split, small_params):
    Xtr, ytr, Xte, _ = digits_split
    ref = flynn.FlyNNClassifier(**small_params).fit(Xtr.astype(np.float32), ytr)
    expected = ref.predict(Xte)
    layouts = {
        "float64 C": Xtr,
        "float64 F": np.asfortranarray(Xtr),
        "float32 F": np.asfortranarray(Xtr, dtype=np.float32),
        "uint8 C": Xtr.astype(np.uint8),
        "uint8 F": np.asfortranarray(Xtr, dtype=np.uint8),
        "int64": Xtr.astype(np.int64),
        "big-endian float64": Xtr.astype(">f8"),
        "strided view": np.repeat(Xtr.astype(np.float32), 2, axis=1)[:, ::2],
        "list": Xtr.tolist(),
        "DataFrame": pd.DataFrame(Xtr.astype(np.float32)),
    }
    for name, X in layouts.items():
        clf = flynn.FlyNNClassifier(**small_params).fit(X, ytr)
        assert clf.to_bytes() == ref.to_bytes(), name
        for Xp in (Xte, np.asfortranarray(Xte, dtype=np.float32), Xte.astype(np.uint8)):
            np.testing.assert_array_equal(clf.predict(Xp), expected, err_msg=name)


def test_read_only_and_large_arrays_convert_in_blocks(small_params):
    # More rows than one conversion block (4 MiB of float32 = 16384 rows of 64 features),
    # read only, in Fortran order: converted block by block, same model as float32 C.
    rng = np.random.default_rng(5)
    X = rng.integers(0, 17, size=(40000, 64)).astype(np.float64)
    y = (X[:, :8].sum(axis=1) > 64).astype(int)
    Xf = np.asfortranarray(X)
    Xf.setflags(write=False)
    a = flynn.FlyNNClassifier(**small_params).fit(Xf, y)
    b = flynn.FlyNNClassifier(**small_params).fit(np.ascontiguousarray(X, dtype=np.float32), y)
    assert a.to_bytes() == b.to_bytes()
    np.testing.assert_array_equal(a.predict_proba(Xf[:20000]), b.predict_proba(X[:20000]))


def test_dataframe_feature_names(digits_split, small_params):
    Xtr, ytr, Xte, _ = digits_split
    cols = [f"px{i}" for i in range(Xtr.shape[1])]
    clf = flynn.FlyNNClassifier(**small_params).fit(pd.DataFrame(Xtr, columns=cols), ytr)
    np.testing.assert_array_equal(clf.feature_names_in_, cols)
    assert clf.n_features_in_ == 64
    pred = clf.predict(pd.DataFrame(Xte, columns=cols))
    with pytest.warns(UserWarning, match="feature names"):
        clf.predict(Xte)
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(pd.DataFrame(Xte, columns=cols[::-1]))
    assert len(pred) == len(Xte)


def test_predict_outputs_are_consistent(fitted, digits_split):
    _, _, Xte, yte = digits_split
    pred = fitted.predict(Xte)
    proba = fitted.predict_proba(Xte)
    decision = fitted.decision_function(Xte)
    scores = fitted.scores(Xte)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # One decision rule: predict is the first class of highest probability, and the
    # decision function's logits order the classes as the probabilities do.
    np.testing.assert_array_equal(fitted.classes_[proba.argmax(axis=1)], pred)
    np.testing.assert_array_equal(fitted.classes_[decision.argmax(axis=1)], pred)
    assert fitted.score(Xte, yte) > 0.85
    # Calibrated at fit: softmax(−score/(ρ·t)) mixed with the class frequencies at the
    # prior weight w, both fitted on the training rows' leave-one-out scores.
    cal = fitted.calibration_
    assert cal["source"] == "leave-one-out" and cal["rows"] > 0
    _, rows = fitted._model.counts()
    np.testing.assert_allclose(proba, probabilities_of(scores, rows, fitted.config_["rho"], cal), rtol=1e-9)


def test_hash_is_what_the_model_counts_and_scores(fitted, digits_split):
    Xtr, ytr, Xte, _ = digits_split
    rho, m = fitted.config_["rho"], fitted.config_["m"]
    winners = fitted.hash(Xtr)
    assert winners.shape == (len(Xtr), rho) and winners.dtype == np.uint32
    assert np.all(np.diff(winners.astype(np.int64), axis=1) > 0)  # ascending, distinct
    assert winners.max() < m
    # Each class's counts are the tally of its rows' winners.
    counts, _ = fitted._model.counts()
    for i, c in enumerate(fitted.classes_):
        np.testing.assert_array_equal(np.bincount(winners[ytr == c].ravel(), minlength=m), counts[i])
    # Every input layout of the same values hashes alike (sparse, DataFrame, one row).
    import scipy.sparse as sp
    np.testing.assert_array_equal(fitted.hash(sp.csr_matrix(Xte)), fitted.hash(Xte))
    np.testing.assert_array_equal(fitted.hash(pd.DataFrame(Xte)), fitted.hash(Xte))
    np.testing.assert_array_equal(fitted.hash(Xte[3:4])[0], fitted.hash(Xte)[3])
    with pytest.raises(ValueError):
        fitted.hash(Xte[:, :10])
    with pytest.raises(Exception, match="not fitted"):
        flynn.FlyNNClassifier().hash(Xte)


def test_binary_decision_function_sign(digits, small_params):
    X, y = digits
    keep = (y == 3) | (y == 8)
    clf = flynn.FlyNNClassifier(**small_params).fit(X[keep], np.where(y[keep] == 3, "three", "eight"))
    d = clf.decision_function(X[keep])
    assert d.shape == (keep.sum(),)
    np.testing.assert_array_equal(np.where(d > 0, clf.classes_[1], clf.classes_[0]), clf.predict(X[keep]))


def test_partial_fit_forget_and_merge_are_exact(digits_split, small_params):
    # The paper's variant: standardising variants (the default) fix their statistics at the
    # first fit, so streamed or merged parts differ from one fit on the whole.
    small_params = dict(small_params, variant="paper")
    Xtr, ytr, Xte, _ = digits_split
    A, B = slice(0, 900), slice(900, None)
    whole = flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr)
    classes = np.unique(ytr)

    stream = flynn.FlyNNClassifier(**small_params)
    stream.partial_fit(Xtr[A], ytr[A], classes=classes).partial_fit(Xtr[B], ytr[B])
    # Exact on the counts; fit() also fits the calibration on the rows, partial_fit cannot.
    assert same_counts(stream, whole)

    a = flynn.FlyNNClassifier(**small_params).partial_fit(Xtr[A], ytr[A], classes=classes)
    b = flynn.FlyNNClassifier(**small_params).partial_fit(Xtr[B], ytr[B], classes=classes)
    assert a.merge(b).to_bytes() == stream.to_bytes()  # neither fitted a calibration
    assert same_counts(a, whole)

    only_a = flynn.FlyNNClassifier(**small_params).partial_fit(Xtr[A], ytr[A], classes=classes)
    before = whole.to_bytes()
    assert same_counts(whole.forget(Xtr[B], ytr[B]), only_a)
    # Forgetting rows that were never learned: an error, and the model is unchanged.
    after_forget = whole.to_bytes()
    with pytest.raises(ValueError, match="cannot forget"):
        whole.forget(Xte, np.full(len(Xte), classes[0]))
    assert whole.to_bytes() == after_forget != before


def test_partial_fit_and_merge_errors(digits_split, small_params):
    Xtr, ytr, _, _ = digits_split
    clf = flynn.FlyNNClassifier(**small_params).partial_fit(Xtr[:100], ytr[:100], classes=range(10))
    with pytest.raises(ValueError, match="not one of the model's classes"):
        clf.partial_fit(Xtr[:5], [42] * 5)
    with pytest.raises(ValueError, match="differ from the classes of the first"):
        clf.partial_fit(Xtr[:5], ytr[:5], classes=range(11))
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(Xtr[:5, :10], ytr[:5])
    other = flynn.FlyNNClassifier(**{**small_params, "seed": 12}).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="seed"):
        clf.merge(other)


def test_pickle_and_joblib_round_trip(fitted, digits_split, small_params):
    Xtr, ytr, Xte, _ = digits_split
    data = pickle.dumps(fitted)
    # Deterministic: the same training gives the same pickle.
    assert pickle.dumps(flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr)) == data
    clone = pickle.loads(data)
    assert clone.to_bytes() == fitted.to_bytes()
    np.testing.assert_array_equal(clone.predict_proba(Xte), fitted.predict_proba(Xte))
    buf = io.BytesIO()
    joblib.dump(fitted, buf)
    buf.seek(0)
    np.testing.assert_array_equal(joblib.load(buf).predict(Xte), fitted.predict(Xte))
    # The pickled state is the model file's bytes, not a path.
    assert fitted.to_bytes() in data


def test_thread_count_never_changes_results(digits_split, small_params):
    Xtr, ytr, Xte, _ = digits_split
    results = []
    for n_jobs in (1, 2, 3, 8, None, -1):
        clf = flynn.FlyNNClassifier(**small_params, n_jobs=n_jobs).fit(Xtr, ytr)
        results.append((clf.to_bytes(), clf.predict_proba(Xte).tobytes()))
    assert all(r == results[0] for r in results)
    with pytest.raises(ValueError, match="n_jobs"):
        flynn.FlyNNClassifier(n_jobs=0).fit(Xtr, ytr)


def test_bad_input_gives_clear_errors(digits_split, fitted):
    Xtr, ytr, Xte, _ = digits_split
    bad = Xtr.copy()
    bad[3, 5] = np.nan  # a missing cell: filled by default, an error under missing="error"
    with pytest.raises(ValueError, match="X:4:6: missing value 'NaN'"):
        flynn.FlyNNClassifier(missing="error").fit(bad, ytr)
    bad[3, 5] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        flynn.FlyNNClassifier().fit(bad, ytr)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(Xte[:, :20])
    with pytest.raises(ValueError, match="one class"):
        flynn.FlyNNClassifier().fit(Xtr[:10], np.zeros(10))
    with pytest.raises(ValueError, match="gamma"):
        flynn.FlyNNClassifier(gamma=1.5).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="rho"):
        flynn.FlyNNClassifier(m=100, rho=100).fit(Xtr, ytr)
    with pytest.raises(ValueError, match="preprocess"):
        flynn.FlyNNClassifier(preprocess="zscore").fit(Xtr, ytr)
    with pytest.raises(ValueError, match="Unknown label type"):
        flynn.FlyNNClassifier().fit(Xtr, ytr + 0.5)


@pytest.mark.parametrize("method", ["fit", "predict"])
def test_fit_and_predict_release_the_gil(digits, method):
    """While flynn works on another thread, this thread keeps running Python: the longest
    pause it sees is far shorter than the call (with the GIL held it would last the whole
    call)."""
    import threading
    import time
    X, y = digits
    big = np.repeat(X.astype(np.float32), 12, axis=0)
    labels = np.repeat(y, 12)
    clf = flynn.FlyNNClassifier(m=16384, s=24, n_jobs=1).fit(X, y)
    call = (lambda: clf.fit(big, labels)) if method == "fit" else (lambda: clf.predict(big))
    done = threading.Event()
    worker = threading.Thread(target=lambda: (call(), done.set()))
    start = last = time.perf_counter()
    longest = 0.0
    worker.start()
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    worker.join()
    duration = time.perf_counter() - start
    assert duration > 0.2, "the call is too short to tell"
    assert longest < 0.5 * duration


def test_model_memory_limit_bounds_load_and_from_bytes(tmp_path):
    """flynn.load / from_bytes hold a model to the estimate of what it will build (the CLI's
    --max-model-memory), before building anything; the default admits ordinary models."""
    from sklearn.datasets import load_digits
    X, y = load_digits(return_X_y=True)
    clf = flynn.FlyNNClassifier(m=4096, seed=1).fit(X, y)
    path = tmp_path / "digits.flynn"
    clf.save(path)
    assert flynn.load(path).to_bytes() == clf.to_bytes()
    assert flynn.load(path, max_model_memory=1 << 30).to_bytes() == clf.to_bytes()
    with pytest.raises(ValueError, match="needs an estimated .* above the limit of 1.0 KiB"):
        flynn.load(path, max_model_memory=1024)
    with pytest.raises(ValueError, match="needs an estimated"):
        flynn.FlyNNClassifier.from_bytes(clf.to_bytes(), max_model_memory=1024)
    for bad in (0, -5, 1.5, "1G", True):
        with pytest.raises(ValueError, match="max_model_memory"):
            flynn.load(path, max_model_memory=bad)
