"""The library's table of settings (include/flynn/settings_table.hpp) seen from Python: the
hyper-parameter keywords are its rows, each gives the model `flynn train` gives with the
row's flag, and a resolved config reads back through HyperParams unchanged."""
import subprocess

import numpy as np
import pytest

import flynn
from flynn import _flynn

# A non-default value of every row for the data below (d = 5); a row without one fails.
EXAMPLES = {
    "m": 512, "expansion_factor": 100.0, "s": 3, "connection_sparsity": 0.8, "rho": 32,
    "wta_ratio": 0.01, "wta_nnz": 50, "gamma": 0.5, "seed": 99, "preprocess": "none",
    "variant": "paper", "class_weight": "c0=2.5",
}


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
        args = [cli, "train", "--data", data, "--model", model, "--seed", "7", "--quiet",
                flag, str(value)]
        if name == "seed":
            args[6:8] = []
        subprocess.run(args, check=True)
        given = {"seed": 7, name: value}
        assert flynn.fit_file(data, n_jobs=1, **given).to_bytes() == model.read_bytes(), name


def test_a_resolved_config_reads_back_through_hyper_params():
    config = _flynn.HyperParams(wta_ratio=0.01, variant="zsign", gamma=0.25).resolve(6)
    params = {k: v for k, v in config.items() if k != "n_features"}
    assert _flynn.HyperParams(**params).resolve(config["n_features"]) == config
    clf = flynn.FlyNNClassifier(m=256, seed=3).fit(np.eye(6), [0, 1, 0, 1, 0, 1])
    assert list(clf.config_) == ["n_features", "m", "s", "rho", "gamma", "seed", "preprocess",
                                 "variant", "class_weight"]


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
