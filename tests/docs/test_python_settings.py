"""FlyNNClassifier's signature and documented parameters against the library's table of
settings (include/flynn/settings_table.hpp, reached through flynn._flynn), so that neither
can drift from the table: a row added there must be a keyword and a documented parameter
here, and a parameter documented here must exist."""
import inspect

import numpy as np
import pytest
from numpydoc.docscrape import ClassDoc, NumpyDocString

import flynn
from flynn import _flynn

# The estimator's own parameters: how it reads data and runs, not settings of a model.
ESTIMATOR_OWN = ["auto", "n_jobs", "missing", "label_name"]


def signature_names():
    return [p for p in inspect.signature(flynn.FlyNNClassifier.__init__).parameters if p != "self"]


def documented_parameters():
    doc = NumpyDocString(inspect.getdoc(flynn.FlyNNClassifier))
    return doc["Parameters"]


@pytest.fixture(scope="module")
def config_keys():
    """The configuration fields the table marks as estimator parameters (config_params)."""
    X = np.random.default_rng(0).random((40, 5)).astype(np.float32)
    y = np.arange(40) % 2
    return [k for k in flynn.FlyNNClassifier(m=4096).fit(X, y).config_ if k != "n_features"]


def test_every_setting_of_a_model_is_a_keyword(config_keys):
    names = signature_names()
    missing = [k for k in config_keys if k not in names]
    assert not missing, f"table rows without a FlyNNClassifier keyword: {missing}"


def test_every_keyword_is_a_setting_or_the_estimators_own(config_keys):
    hyper = set(_flynn.hyper_param_names())
    for name in signature_names():
        assert name in ESTIMATOR_OWN or (name in hyper and name in config_keys), \
            f"FlyNNClassifier({name}=...) is neither a row of the table of settings nor one of {ESTIMATOR_OWN}"


def test_settings_default_to_the_tables_rule():
    params = inspect.signature(flynn.FlyNNClassifier.__init__).parameters
    for name in signature_names():
        if name not in ESTIMATOR_OWN:
            assert params[name].default is None, f"{name} must default to None (the table's default rule)"


def test_every_keyword_is_documented_in_order():
    documented = [p.name for p in documented_parameters()]
    assert documented == signature_names()


def test_each_setting_names_its_flag():
    for p in documented_parameters():
        if p.name in ESTIMATOR_OWN:
            continue
        flag = "--" + p.name.replace("_", "-")
        assert flag in " ".join(p.desc), f"the documentation of {p.name} does not name {flag}"


def test_the_sklearn_attributes_are_documented():
    attributes = {a.name for a in ClassDoc(flynn.FlyNNClassifier, config={})["Attributes"]}
    for name in ("classes_", "n_features_in_", "config_"):
        assert name in attributes


def test_the_federated_keywords_are_the_table():
    # simulate's DP keywords are documented from the DP table itself.
    doc = NumpyDocString(inspect.getdoc(flynn.federated.simulate))
    other = [p.name for p in doc["Other Parameters"]]
    assert other == [row["name"] for row in _flynn.federated.dp_param_fields()]
