"""flynn.federated: the simulated federation and the party-level API."""
import copy
import pickle

import numpy as np
import pytest

import flynn
from conftest import same_counts
from flynn import federated


@pytest.mark.parametrize("split", ["iid", "by-class", "dirichlet:0.3", "sizes:1,0,3"])
def test_simulate_without_dp_equals_central_training(digits_split, small_params, split):
    Xtr, ytr, Xte, _ = digits_split
    fed = federated.simulate(Xtr, ytr, parties=3, split=split, split_seed=4, **small_params)
    central = flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr)
    assert fed.to_bytes() == central.to_bytes()
    report = fed.federation_report_
    assert sum(report["rows_per_party"]) == len(Xtr) and len(report["rows_per_party"]) == 3
    assert report["privacy"] is None
    np.testing.assert_array_equal(fed.predict(Xte), central.predict(Xte))


def test_simulate_matches_the_cli_model(cli, digits_split, small_params, tmp_path):
    import subprocess
    from test_cli_parity import write_csv
    Xtr, ytr, _, _ = digits_split
    write_csv(tmp_path / "d.csv", Xtr, ytr)
    write_csv(tmp_path / "t.csv", Xtr[:10], ytr[:10])
    args = [f"--{k}={v}" for k, v in small_params.items()]
    subprocess.run([cli, "federated", "simulate", "--data", str(tmp_path / "d.csv"), "--test",
                    str(tmp_path / "t.csv"), "--parties", "4", "--model",
                    str(tmp_path / "fed.flynn"), "--quiet", *args], check=True, capture_output=True)
    fed = federated.simulate(Xtr, ytr, parties=4, **small_params)
    assert fed.to_bytes() == (tmp_path / "fed.flynn").read_bytes()


def test_simulate_federated_evaluation_equals_the_pooled_test_rows(cli, digits_split, small_params, tmp_path):
    import json
    import subprocess
    from test_cli_parity import write_csv
    Xtr, ytr, Xte, yte = digits_split
    fed = federated.simulate(Xtr, ytr, parties=3, X_test=Xte, y_test=yte, **small_params)
    t = fed.federation_report_["federation_test"]
    predicted = fed.predict(Xte)
    assert t["rows"] == len(Xte) and t["parties_with_test_rows"] == 3
    assert t["accuracy"] == pytest.approx(np.mean(predicted == yte), abs=1e-12)
    classes = list(fed.classes_)
    expected = np.zeros((len(classes), len(classes)), dtype=np.uint64)
    for truth, guess in zip(yte, predicted):
        expected[classes.index(truth), classes.index(guess)] += 1
    np.testing.assert_array_equal(t["confusion_matrix"], expected)
    # The same figures as the CLI's `federated simulate --test` on the same rows.
    write_csv(tmp_path / "d.csv", Xtr, ytr)
    write_csv(tmp_path / "t.csv", Xte, yte)
    args = [f"--{k}={v}" for k, v in small_params.items()]
    out = subprocess.run([cli, "federated", "simulate", "--data", str(tmp_path / "d.csv"), "--test",
                          str(tmp_path / "t.csv"), "--parties", "3", "--json", "--quiet", *args],
                         check=True, capture_output=True, text=True).stdout
    cli_test = json.loads(out)["federation_test"]
    assert cli_test["accuracy"] == pytest.approx(t["accuracy"], abs=1e-12)
    np.testing.assert_array_equal(np.array(cli_test["confusion_matrix"], dtype=np.uint64), t["confusion_matrix"])
    # Without test rows there is no evaluation; labels y never had are refused.
    assert "federation_test" not in federated.simulate(Xtr, ytr, parties=3, **small_params).federation_report_
    with pytest.raises(ValueError, match="y_test has labels"):
        federated.simulate(Xtr, ytr, parties=3, X_test=Xte[:5], y_test=np.array([99] * 5), **small_params)
    with pytest.raises(ValueError, match="go together"):
        federated.simulate(Xtr, ytr, parties=3, X_test=Xte, **small_params)


def test_simulate_with_dp(digits_split, small_params):
    Xtr, ytr, Xte, yte = digits_split
    fed = federated.simulate(Xtr, ytr, parties=2, dp_epsilon=1e4, dp_T=4000, **small_params)
    prov = fed._model.provenance
    assert prov["differentially_private"] and prov["epsilon"] == 1e4 and prov["dp_T"] == 4000
    privacy = fed.federation_report_["privacy"]
    assert privacy["epsilon_total"] == pytest.approx(1e4)
    assert privacy["parties"] == 2 and privacy["T"] == 4000
    # A generous budget keeps most of the signal; a DP model cannot forget rows.
    assert fed.score(Xte, yte) > 0.5
    with pytest.raises(ValueError, match="differentially private"):
        fed.forget(Xtr[:5], ytr[:5])
    with pytest.raises(ValueError, match="dp_T"):
        federated.simulate(Xtr, ytr, parties=2, dp_epsilon=1.0, **small_params)


def test_simulate_with_dp_T_auto(digits_split, small_params):
    """dp_T="auto": T from the rule of public quantities (2^round(log2(8·ε'/τ))), reported
    as the T used; the settings say "auto"."""
    Xtr, ytr, _, _ = digits_split
    fed = federated.simulate(Xtr, ytr, parties=2, dp_epsilon=8.0, dp_T="auto", **small_params)
    privacy = fed.federation_report_["privacy"]
    assert privacy["T"] == 16 and privacy["settings"]["dp_T"] == "auto"  # 8·(8/2)/2 = 16
    assert fed._model.provenance["dp_T"] == 16
    with pytest.raises(flynn.FlynnError, match="expected a count of entries or 'auto'"):
        federated.simulate(Xtr, ytr, parties=2, dp_epsilon=8.0, dp_T="many", **small_params)


def test_a_loaded_dp_model_refuses_exact_rows(digits_split, small_params, tmp_path):
    """The rule is the library's (FlyNN), so Python keeps it without repeating it: a model
    released under DP claims its epsilon, and rows learned exactly on top would void it."""
    Xtr, ytr, _, _ = digits_split
    fed = federated.simulate(Xtr, ytr, parties=2, dp_epsilon=3.0, dp_T=400, **small_params)
    fed.save(tmp_path / "dp.flynn")
    before = (tmp_path / "dp.flynn").read_bytes()
    dp_model = flynn.load(tmp_path / "dp.flynn")
    with pytest.raises(ValueError, match=r"differentially private model \(epsilon=3\).*"
                                         r"not be covered by its epsilon"):
        dp_model.partial_fit(Xtr[:20], ytr[:20])
    assert dp_model.to_bytes() == before
    exact = flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr)
    for a, b in [(dp_model, exact), (exact, dp_model), (dp_model, flynn.load(tmp_path / "dp.flynn"))]:
        with pytest.raises(ValueError, match="differentially private"):
            a.merge(b)
    # fit starts over: a new model of exact counts, which takes exact rows again.
    dp_model.fit(Xtr, ytr)
    assert not dp_model._model.provenance["differentially_private"]
    dp_model.partial_fit(Xtr[:20], ytr[:20])


def test_simulate_dp_unit_postprocess_and_public_feature_stats(cli, digits_split, small_params,
                                                               tmp_path):
    import subprocess
    from test_cli_parity import write_csv
    Xtr, ytr, Xte, yte = digits_split
    d = Xtr.shape[1]
    stats = (np.full(d, 8.0), np.full(d, 4.5))
    # Without DP, public statistics give the central model trained with the same file.
    fed = federated.simulate(Xtr, ytr, parties=3, variant="zsign-q", feature_stats=stats,
                             **small_params)
    write_csv(tmp_path / "d.csv", Xtr, ytr)
    (tmp_path / "s.csv").write_text(",".join(["8"] * d) + "\n" + ",".join(["4.5"] * d) + "\n")
    args = [f"--{k}={v}" for k, v in small_params.items()]
    subprocess.run([cli, "train", "--data", str(tmp_path / "d.csv"), "--model", str(tmp_path / "c.flynn"),
                    "--variant", "zsign-q", "--feature-stats", str(tmp_path / "s.csv"), "--quiet", *args],
                   check=True, capture_output=True)
    assert fed.to_bytes() == (tmp_path / "c.flynn").read_bytes()
    # Under DP a standardising variant needs them, and the report names unit and post-processing.
    with pytest.raises(ValueError, match="feature_stats"):
        federated.simulate(Xtr, ytr, parties=2, dp_epsilon=1e4, dp_T=4000, variant="zsign-q",
                           **small_params)
    fed = federated.simulate(Xtr, ytr, parties=2, dp_epsilon=1e4, dp_T=4000, variant="zsign-q",
                             feature_stats=stats, dp_unit="record", dp_postprocess="none",
                             **small_params)
    privacy = fed.federation_report_["privacy"]
    assert privacy["unit"] == "record" and privacy["postprocess"] == "none"
    assert privacy["epsilon_per_party"] == pytest.approx(1e4)
    assert fed.config_["variant"] == "zsign-q" and fed.score(Xte, yte) > 0.5
    with pytest.raises(ValueError, match="feature_stats"):
        federated.simulate(Xtr, ytr, feature_stats=(np.ones(3), np.ones(3)), **small_params)
    with pytest.raises(ValueError, match="unit"):
        federated.simulate(Xtr, ytr, dp_epsilon=1.0, dp_T=10, dp_unit="rows", **small_params)


def test_party_counts_aggregate_to_central_training(digits_split, small_params):
    small_params = dict(small_params, variant="paper")  # the party-level counts API
    Xtr, ytr, Xte, _ = digits_split
    classes = np.unique(ytr)
    shards = np.array_split(np.arange(len(Xtr)), 3)
    parts = []
    for rows in shards:
        party = flynn.FlyNNClassifier(**small_params).partial_fit(Xtr[rows], ytr[rows],
                                                                  classes=classes)
        parts.append(pickle.loads(pickle.dumps(party.export_counts())))  # any transport
    fed = flynn.FlyNNClassifier.from_counts(parts)
    central = flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr)
    # A model from counts alone has no rows to fit a calibration on: the counts are central's.
    assert same_counts(fed, central)
    np.testing.assert_array_equal(fed.scores(Xte), central.scores(Xte))
    assert parts[0].counts.shape == (10, small_params["m"])
    assert parts[0].counts.sum() == parts[0].rows_per_class.sum() * small_params["rho"]


def test_party_counts_with_pairs_aggregate_to_central_training(digits_split, small_params):
    """Second-order filters: the parties' count tables hold m + 8m cells per class, each row
    adds ρ·(1 + pairs) ones, and the aggregate is still central training's model."""
    params = dict(small_params, variant="paper", pairs=2)
    Xtr, ytr, Xte, _ = digits_split
    classes = np.unique(ytr)
    parts = [flynn.FlyNNClassifier(**params).partial_fit(Xtr[rows], ytr[rows], classes=classes).export_counts()
             for rows in np.array_split(np.arange(len(Xtr)), 2)]
    fed = flynn.FlyNNClassifier.from_counts(parts)
    central = flynn.FlyNNClassifier(**params).fit(Xtr, ytr)
    assert same_counts(fed, central)
    assert fed.config_["pairs"] == 2
    assert parts[0].counts.shape == (10, 9 * params["m"])
    assert parts[0].counts.sum() == parts[0].rows_per_class.sum() * params["rho"] * 3
    np.testing.assert_array_equal(fed.scores(Xte), central.scores(Xte))
    # The file keeps the option: a model read back predicts the same and refits the same.
    loaded = flynn.FlyNNClassifier.from_bytes(central.to_bytes())
    assert loaded.get_params()["pairs"] == 2
    np.testing.assert_array_equal(loaded.predict(Xte), central.predict(Xte))


def test_party_dp_releases(digits_split, small_params):
    small_params = dict(small_params, variant="paper")  # the party-level counts API
    Xtr, ytr, Xte, yte = digits_split
    classes = np.unique(ytr)
    releases = []
    for rows in np.array_split(np.arange(len(Xtr)), 2):
        party = flynn.FlyNNClassifier(**small_params).partial_fit(Xtr[rows], ytr[rows],
                                                                  classes=classes)
        release = party.export_counts().privatize(epsilon=1e4, T=4000, parties=2)
        assert len(release.index) == 4000 and np.all(np.diff(release.index.astype(np.int64)) > 0)
        releases.append(release)
    fed = flynn.FlyNNClassifier.from_counts(releases)
    assert fed._model.provenance == {"differentially_private": True, "epsilon": 1e4,
                                     "dp_T": 4000, "dp_parties": 2}
    assert fed.score(Xte, yte) > 0.5
    with pytest.raises(federated.FederationError, match="budget"):
        flynn.FlyNNClassifier.from_counts(releases + releases[:1])


def test_parties_must_agree(digits_split, small_params):
    small_params = dict(small_params, variant="paper")  # the party-level counts API
    Xtr, ytr, _, _ = digits_split
    a = flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr).export_counts()
    b = flynn.FlyNNClassifier(**{**small_params, "seed": 99}).fit(Xtr, ytr).export_counts()
    with pytest.raises(federated.FederationError, match="seed"):
        flynn.FlyNNClassifier.from_counts([a, b])
    c = flynn.FlyNNClassifier(**small_params).fit(Xtr[ytr < 5], ytr[ytr < 5]).export_counts()
    with pytest.raises(federated.FederationError, match="classes"):
        flynn.FlyNNClassifier.from_counts([a, c])


def test_party_level_api_refuses_standardising_variants(digits_split, small_params):
    Xtr, ytr, _, _ = digits_split
    part = flynn.FlyNNClassifier(**dict(small_params, variant="zsign-q")).fit(Xtr, ytr)
    with pytest.raises(flynn.federated.FederationError, match="standardises"):
        flynn.federated.aggregate([part.export_counts()])


def test_aggregate_applies_the_federations_checks(digits_split, small_params):
    """flynn.federated.aggregate sums exact counts through the C++ federation's checks, so
    a party whose counts disagree with its rows is refused, naming the class."""
    small_params = dict(small_params, variant="paper")
    Xtr, ytr, _, _ = digits_split
    classes = np.unique(ytr)
    parts = [flynn.FlyNNClassifier(**small_params).partial_fit(Xtr[rows], ytr[rows], classes=classes)
             .export_counts() for rows in np.array_split(np.arange(len(Xtr)), 2)]
    tampered = copy.deepcopy(parts[1])
    tampered.counts[3, :] = 0  # class 3's counts no longer sum to its rows × codes per row
    with pytest.raises(federated.FederationError, match="class '3'.*rows × codes per row"):
        federated.aggregate([parts[0], tampered])
    inflated = copy.deepcopy(parts[1])
    inflated.counts[0, 0] = inflated.rows_per_class[0] + parts[0].rows_per_class[0] + 1
    with pytest.raises(federated.FederationError, match="more than its"):
        federated.aggregate([parts[0], inflated])
    one_class = copy.deepcopy(parts[0])
    one_class.counts[1:, :] = 0
    one_class.rows_per_class[1:] = 0
    with pytest.raises(federated.FederationError, match="at least two"):
        federated.aggregate([one_class])
    short = copy.deepcopy(parts[1])
    short.rows_per_class = short.rows_per_class[:3]
    with pytest.raises(federated.FederationError, match="row totals"):
        federated.aggregate([parts[0], short])


def test_privatize_takes_the_privacy_unit(digits_split, small_params):
    small_params = dict(small_params, variant="paper")
    Xtr, ytr, _, _ = digits_split
    counts = flynn.FlyNNClassifier(**small_params).fit(Xtr, ytr).export_counts()
    assert counts.privatize(1.0, 10, 2).unit == "paper"  # the default: today's behaviour
    release = counts.privatize(1.0, 10, 2, unit="record")
    assert release.unit == "record" and len(release.index) == 10
    with pytest.raises(flynn.FlynnError, match="row"):
        counts.privatize(1.0, 10, 2, unit="row")
    # The parties of one federation use one unit.
    with pytest.raises(federated.FederationError, match="unit"):
        federated.aggregate([counts.privatize(1.0, 10, 2), release])


def test_no_import_cycle_between_the_classifier_and_federated():
    """_classifier.py builds on _party_counts.py; federated.py on both; nothing imports back."""
    import ast
    import pathlib

    def imported(module):
        tree = ast.parse(pathlib.Path(flynn.__file__).with_name(module + ".py").read_text())
        return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1}

    assert "federated" not in imported("_classifier")
    assert not imported("_party_counts") & {"_classifier", "federated"}


def test_the_paper_half_rule_federates_from_the_pooled_statistics():
    """The default variant's second half hashes the raw row only when the rows' energy spreads
    over 16 columns (docs/design/defaults.md, "The paper half"): with one loud column, held by
    one party only, the federation standardises it as central training does."""
    rng = np.random.default_rng(11)
    y = np.arange(150) % 3
    X = (rng.normal(size=(150, 20)) + y[:, None]).astype(np.float32)
    X[::3, 4] = (X[::3, 4] + 3) * 5000  # the loud rows: y = 0, all with party 0 below
    central = flynn.FlyNNClassifier(n_jobs=1).fit(X, y)
    assert central.config_["paper_half_min_columns"] == 16
    raw_half = flynn.FlyNNClassifier(n_jobs=1, paper_half_min_columns=0).fit(X, y)
    assert central.to_bytes() != raw_half.to_bytes()  # the rule acted
    fed = flynn.federated.simulate(X, y, parties=3, split="by-class")
    assert fed.to_bytes() == central.to_bytes()
