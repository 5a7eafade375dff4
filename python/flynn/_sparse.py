"""scipy.sparse input for FlyNNClassifier: CSR and CSC matrices (and, through
scikit-learn's validation, every other scipy.sparse format) go to the core as CSR,
without being made dense. The core expands them block by block, as it expands the rows
of a LIBSVM file, so a sparse matrix, its dense equal and the LIBSVM file holding it give
the same model bytes and predictions."""
from . import _flynn

# What scikit-learn's check_array keeps as it is (anything else sparse becomes CSR).
ACCEPT_SPARSE = ("csr", "csc")


def is_sparse(X):
    # scipy is optional for flynn; a matrix that claims to be sparse brings it along.
    try:
        from scipy import sparse
    except ImportError:  # pragma: no cover - scipy absent: nothing can be sparse
        return False
    return sparse.issparse(X)


def core_rows(X):
    """X as the core's rows: a validated numpy array unchanged; a scipy.sparse matrix as a
    _flynn.CsrRows over its CSR arrays (CSC is converted; duplicate entries are summed on
    a copy, the caller's matrix is never changed)."""
    if not is_sparse(X):
        return X
    X = X.tocsr()  # the same object when X is CSR already
    if not X.has_canonical_format:
        # Sorted columns without duplicates, on a copy (sum_duplicates works in place).
        X = X.copy()
        X.sum_duplicates()
    return _flynn.CsrRows(X.indptr, X.indices, X.data, X.shape[1])
