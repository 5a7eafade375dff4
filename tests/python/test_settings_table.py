"""The library's table of settings (include/flynn/settings_table.hpp) seen from Python: the
hyper-parameter keywords are its rows, each gives the model `flynn train` gives with the
row's flag, and a resolved config reads back through HyperParams unchanged; the DP
settings' table (flynn/federated/dp_settings.hpp) gives flynn.federated.simulate its DP
keywords."""
import subprocess

import numpy as np
import pytest

import flynn
from flynn import _flynn

# A non-default value of every row for the data below (d = 5: anchor units, whose default γ
# is 0.5); a row without one fails.
EXAMPLES = {
    "m": 512, "expansion_factor": 100.0, "s": 3, "connection_sparsity": 0.8, "rho": 32,
    "wta_ratio": 0.01, "wta_nnz": 50, "gamma": 0.7, "seed": 99, "preprocess": "none",
    "variant": "paper", "class_weight": "c0=2.5", "filter_scoring": "absolute", "pairs": 3,
    "paper_half_min_columns": 6, "value_transform": "log1p",
}
# Settings a row's example needs beside it (the paper-half rule needs a paper-half variant
# that standardises; d = 5 defaults to anchor): given to both sides of each comparison.
COMPANIONS = {"paper_half_min_columns": {"variant": "anchor+paper"}}


def write_rows(path):
    rng = np.random.default_rng(5)
    with open(path, "w") as f:
        for i in range(90):
            row = rng.normal(size=5) + (i % 3)
            f.write(",".join(f"{v:.4f}" for v in row) + f",c{i % 3}\n")


def test_every_row_is_a_keyword_giving_the_clis_model(cli, tmp_path):
    names = _flynn.hyper_param_names()
    assert set(names) == set(EXAMPLES), "give every row of the table an example"
    data = tmp_path / "rows.csv"
    write_rows(data)
    for name in names:
        flag = "--" + name.replace("_", "-")
        value = EXAMPLES[name]
        model = tmp_path / f"{name}.flynn"
        companions = COMPANIONS.get(name, {})
        args = [cli, "train", "--data", data, "--model", model, "--seed", "7", "--quiet",
                flag, str(value)]
        for k, v in companions.items():
            args += ["--" + k.replace("_", "-"), str(v)]
        if name == "seed":
            args[6:8] = []
        subprocess.run(args, check=True)
        given = {"seed": 7, name: value, **companions}
        assert flynn.fit_file(data, n_jobs=1, **given).to_bytes() == model.read_bytes(), name


def test_a_resolved_config_reads_back_through_hyper_params():
    config = _flynn.HyperParams(wta_ratio=0.01, variant="zsign", gamma=0.25).resolve(6)
    params = {k: v for k, v in config.items() if k != "n_features"}
    assert _flynn.HyperParams(**params).resolve(config["n_features"]) == config
    clf = flynn.FlyNNClassifier(m=256, seed=3).fit(np.eye(6), [0, 1, 0, 1, 0, 1])
    assert list(clf.config_) == ["n_features", "m", "s", "rho", "gamma", "seed", "preprocess",
                                 "variant", "class_weight", "filter_scoring", "pairs",
                                 "paper_half_min_columns", "value_transform"]


def test_bad_keywords_name_the_setting():
    with pytest.raises(TypeError, match="unexpected hyper-parameter 'colour'"):
        _flynn.HyperParams(colour=1)
    with pytest.raises(TypeError, match="m=-1: expected a non-negative integer"):
        _flynn.HyperParams(m=-1)
    with pytest.raises(TypeError, match="m=True: expected a non-negative integer"):
        _flynn.HyperParams(m=True)
    with pytest.raises(TypeError, match="gamma='x': expected a number"):
        _flynn.HyperParams(gamma="x")
    with pytest.raises(ValueError, match="variant: 'fancy' is not one of"):
        _flynn.HyperParams(variant="fancy")
    # None is "not given", numpy scalars are numbers.
    assert _flynn.HyperParams(m=None).resolve(5) == _flynn.HyperParams().resolve(5)
    assert _flynn.HyperParams(m=np.int64(300), gamma=np.float64(0.5)).resolve(5)["m"] == 300


# A non-default value of every DP row (the CLI's --dp-* flags); a row without one fails.
DP_EXAMPLES = {"dp_epsilon": 5000.0, "dp_T": 300, "dp_exponent": "reference", "dp_unit": "record",
               "dp_postprocess": "threshold"}


def test_every_dp_row_is_a_simulate_keyword_reaching_the_federation():
    names = [row["name"] for row in _flynn.federated.dp_param_fields()]
    assert set(names) == set(DP_EXAMPLES), "give every DP row an example"
    rng = np.random.default_rng(3)
    X = (rng.normal(size=(60, 5)) + np.arange(60)[:, None] % 3).astype(np.float32)
    y = np.arange(60) % 3
    base = {"dp_epsilon": 1e4, "dp_T": 200}
    default = flynn.federated.simulate(X, y, parties=2, m=256, seed=1, **base)
    for name in names:
        assert name in flynn.federated.simulate.__doc__, name
        fed = flynn.federated.simulate(X, y, parties=2, m=256, seed=1,
                                       **{**base, name: DP_EXAMPLES[name]})
        used = fed.federation_report_["privacy"]["settings"]
        assert used[name] == DP_EXAMPLES[name], name
        assert default.federation_report_["privacy"]["settings"][name] != DP_EXAMPLES[name], name
    # The rules are the flags' (dp_params_from_given), named as keywords.
    with pytest.raises(ValueError, match="dp_epsilon and dp_T go together"):
        flynn.federated.simulate(X, y, dp_epsilon=1.0)
    with pytest.raises(ValueError, match="dp_exponent, dp_unit and dp_postprocess need dp_epsilon"):
        flynn.federated.simulate(X, y, dp_unit="record")
    with pytest.raises(TypeError, match="unexpected keyword argument 'dp_epsilom'; the DP settings "
                                        "are dp_epsilon, dp_T"):
        flynn.federated.simulate(X, y, dp_epsilom=1.0)
    with pytest.raises(TypeError, match="dp_T=1.5: expected a non-negative integer"):
        flynn.federated.simulate(X, y, dp_epsilon=1.0, dp_T=1.5)


def test_every_row_is_a_simulate_keyword_reaching_the_federation():
    """simulate's hyper-parameter keywords are the table's rows (as fit_file's and the CLI's
    flags): each reaches the parties' agreed config, and the federation's model is the
    central one trained with the same setting."""
    rng = np.random.default_rng(3)
    X = (rng.normal(size=(90, 5)) + np.arange(90)[:, None] % 3).astype(np.float32)
    y = np.array([f"c{i % 3}" for i in range(90)])
    default = flynn.federated.simulate(X, y, parties=2, seed=7).config_
    for name in _flynn.hyper_param_names():
        given = {"seed": 7, name: EXAMPLES[name], **COMPANIONS.get(name, {})}
        fed = flynn.federated.simulate(X, y, parties=3, **given)
        want = _flynn.HyperParams(**given).resolve(5)
        assert fed.config_ == want, name
        assert fed.config_ != default, name
    # The estimator's form of class_weight (a dict of labels) and its equality with central
    # training; the estimator's parameters that no federation agrees on are refused by name.
    fed = flynn.federated.simulate(X, y, parties=3, class_weight={"c0": 2.5}, filter_scoring="absolute")
    central = flynn.FlyNNClassifier(class_weight={"c0": 2.5}, filter_scoring="absolute").fit(X, y)
    assert fed.to_bytes() == central.to_bytes()
    for name, value in [("auto", True), ("missing", "zero"), ("label_name", "y")]:
        with pytest.raises(TypeError, match=f"got {name}=: not a setting the parties agree on"):
            flynn.federated.simulate(X, y, **{name: value})
