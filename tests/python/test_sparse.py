"""scipy.sparse input: CSR (and CSC, COO, ... through CSR) goes to the core without being
made dense, and gives exactly the model and predictions of the dense equal and of
``flynn train`` on the LIBSVM file holding the same rows."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import sparse

import flynn
from conftest import same_counts

PARAMS = dict(m=1024, s=4, rho=16, gamma=0.7, seed=3)


def sparse_rows(n=240, d=40, density=0.15, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = np.round(rng.random((n, d)) + y[:, None] * (np.arange(d) % 3 == 0), 3)
    X[rng.random((n, d)) > density] = 0.0
    X[0, d - 1] = 0.5  # the last column has an entry: the LIBSVM file is d wide
    return X.astype(np.float32), y


@pytest.mark.parametrize("variant", [None, "paper", "thermo-sign"])
@pytest.mark.parametrize("form", ["csr", "csc", "coo", "csr64", "float64", "uint8"])
def test_sparse_forms_give_the_dense_model_and_predictions(form, variant):
    X, y = sparse_rows()
    if form == "uint8":
        X = np.round(X * 10).astype(np.uint8)
    dense_fit = flynn.FlyNNClassifier(variant=variant, **PARAMS).fit(X, y)
    S = sparse.csr_matrix(X)
    if form in ("csc", "coo"):
        S = S.asformat(form)
    elif form == "csr64":
        S.indices = S.indices.astype(np.int64)
        S.indptr = S.indptr.astype(np.int64)
    elif form == "float64":
        S = S.astype(np.float64)
    clf = flynn.FlyNNClassifier(variant=variant, **PARAMS).fit(S, y)
    assert clf.to_bytes() == dense_fit.to_bytes()
    assert (clf.predict(S) == dense_fit.predict(X)).all()
    assert np.array_equal(clf.predict_proba(S), dense_fit.predict_proba(X))
    assert np.array_equal(clf.scores(S), dense_fit.scores(X))
    assert np.array_equal(clf.decision_function(S), dense_fit.decision_function(X))


def test_partial_fit_and_forget_take_sparse_rows():
    X, y = sparse_rows()
    S = sparse.csr_matrix(X)
    # (The default variant standardises with the first batch's statistics, so the
    # reference is the same two calls on dense rows.)
    dense = flynn.FlyNNClassifier(**PARAMS).partial_fit(X[:100], y[:100], classes=[0, 1, 2])
    dense.partial_fit(X[100:], y[100:])
    parts = flynn.FlyNNClassifier(**PARAMS).partial_fit(S[:100], y[:100], classes=[0, 1, 2])
    parts.partial_fit(S[100:], y[100:])
    assert parts.to_bytes() == dense.to_bytes()
    paper = dict(PARAMS, variant="paper")  # no statistics: batches sum to the whole
    whole = flynn.FlyNNClassifier(**paper).fit(X, y)
    parts = flynn.FlyNNClassifier(**paper).partial_fit(S[:100], y[:100], classes=[0, 1, 2])
    assert same_counts(parts.partial_fit(S[100:], y[100:]), whole)  # fit() adds a calibration
    fewer = flynn.FlyNNClassifier(**PARAMS).fit(X, y).forget(S[200:], y[200:])
    dense_fewer = flynn.FlyNNClassifier(**PARAMS).fit(X, y).forget(X[200:], y[200:])
    assert fewer.to_bytes() == dense_fewer.to_bytes()


def test_duplicate_entries_are_summed_without_changing_the_callers_matrix():
    X, y = sparse_rows(n=60)
    coo = sparse.coo_matrix(X)
    # Each entry split in two halves: a non-canonical CSR whose sum is X.
    dup = sparse.csr_matrix((np.concatenate([coo.data / 2, coo.data / 2]),
                             (np.concatenate([coo.row, coo.row]),
                              np.concatenate([coo.col, coo.col]))), shape=X.shape)
    dup.has_canonical_format = False
    before = dup.data.copy()
    S_bytes = flynn.FlyNNClassifier(**PARAMS).fit(dup, y).to_bytes()
    assert S_bytes == flynn.FlyNNClassifier(**PARAMS).fit(dup.toarray(), y).to_bytes()
    assert np.array_equal(dup.data, before)


def test_the_cli_on_the_libsvm_file_writes_the_same_model(cli, tmp_path):
    X, y = sparse_rows()
    S = sparse.csr_matrix(X)
    path = tmp_path / "rows.libsvm"
    with open(path, "w") as f:
        for r in range(S.shape[0]):
            row = S[r]
            f.write(str(y[r]) + "".join(f" {j + 1}:{v:.9g}" for j, v in zip(row.indices, row.data))
                    + "\n")
    model = tmp_path / "cli.flynn"
    subprocess.run([cli, "train", "--data", str(path), "--model", str(model), "--quiet", "--m",
                    "1024", "--s", "4", "--rho", "16", "--gamma", "0.7", "--seed", "3"],
                   check=True)
    clf = flynn.FlyNNClassifier(**PARAMS).fit(S, y)
    assert clf.to_bytes() == model.read_bytes()
    out = json.loads(subprocess.run([cli, "predict", "--model", str(model), "--data", str(path),
                                     "--quiet", "--json"], check=True, capture_output=True,
                                    text=True).stdout)
    assert [str(p) for p in clf.predict(S)] == out["predictions"]


def test_bad_sparse_input_is_a_value_error():
    X, y = sparse_rows(n=30)
    clf = flynn.FlyNNClassifier(**PARAMS).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(sparse.csr_matrix(X[:, :10]))
    bad = sparse.csr_matrix(X)
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match="NaN|infinity"):
        flynn.FlyNNClassifier(**PARAMS).fit(bad, y)


def test_a_wide_sparse_matrix_is_never_made_dense():
    """2000 × 100000 with 20 entries a row: dense it would be 800 MB of float32; fitting and
    predicting grow the peak RSS by far less (blocks of 4 MiB)."""
    code = textwrap.dedent("""
        import resource
        import numpy as np
        from scipy import sparse
        import flynn
        rng = np.random.default_rng(0)
        columns = np.concatenate([np.sort(rng.choice(100000, 20, replace=False))
                                  for _ in range(2000)])
        S = sparse.csr_matrix((rng.random(40000, dtype=np.float32), columns,
                               np.arange(0, 40001, 20)), shape=(2000, 100000))
        y = np.arange(2000) % 2
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        clf = flynn.FlyNNClassifier(m=2048, variant="paper", n_jobs=1).fit(S, y)
        p = clf.predict(S)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(len(p), (after - before) // 1024, before // 1024)
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout.split()
    assert int(out[0]) == 2000
    assert int(out[2]) < 600  # the start is far below the 800 MB a dense copy would add
    assert int(out[1]) < 200, f"peak RSS grew by {out[1]} MB"
