"""flynn: nearest-neighbour classification with FlyHash and Fly Bloom Filters (FlyNN).

A scikit-learn estimator over flynn's C++ core. Models are the CLI's model files:
``FlyNNClassifier.save`` writes what ``flynn train`` writes, ``flynn.load`` reads what it
writes, and pickling goes through the same bytes.

    >>> import flynn
    >>> clf = flynn.FlyNNClassifier(seed=1).fit(X_train, y_train)   # doctest: +SKIP
    >>> clf.score(X_test, y_test)                                    # doctest: +SKIP

flynn.fit_file trains from a data file as ``flynn train`` does (streamed from disk);
flynn.partial_fit_file and flynn.forget_file add or remove a file's rows as ``flynn update``
and ``flynn forget`` do.
The user guide's Python page has worked examples; flynn.federated trains across parties,
flynn.dask on a Dask cluster, flynn.tune searches the hyper-parameters and flynn.report
writes a classification report (the user guide's reports page).
flynn.build_info() says which SIMD target and kernels this machine runs.
"""
from ._flynn import FederationError, FlynnError, __version__, build_info
from ._classifier import FlyNNClassifier, load
from ._fit_file import fit_file, forget_file, partial_fit_file
from ._tune import TuneSearch, tune
from ._report import Report, report, report_from_predictions
from . import federated

__all__ = ["FlyNNClassifier", "load", "fit_file", "partial_fit_file", "forget_file", "tune",
           "TuneSearch", "report", "report_from_predictions", "Report", "federated", "FlynnError",
           "FederationError", "__version__", "build_info"]
