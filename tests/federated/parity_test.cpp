// FlyNNFL's exactness (Theorem 4) and its refusals, on the thread backend.
//
// Property tests: over many random splits — IID, by class (each party a single class),
// Dirichlet label skew, unequal sizes, empty parties — the federated counts equal central
// training's counts and the federated model file is byte-identical to the central model's.
// Then the agreement step: any differing fingerprint field, an unreadable shard or an
// unknown label stops every party with the same error; and the DP path's shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "flynn/classifier.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/random.hpp"
#include "test_support.hpp"

namespace flynn::federated {
namespace {

HyperParams small_hyper(std::uint64_t seed, double gamma = 0.6) {
  HyperParams h;
  h.m = 256;
  h.s = 3;
  h.rho = 12;
  h.gamma = gamma;
  h.seed = seed;
  return h;
}

// Federated vs central on one split of `data`.
void expect_parity(const Dataset& data, const std::vector<std::vector<std::size_t>>& split,
                   const HyperParams& hyper, const std::string& what) {
  std::vector<Dataset> shards;
  for (const auto& rows : split) shards.push_back(data.subset(rows));
  std::vector<const Dataset*> ptrs;
  for (const Dataset& d : shards) ptrs.push_back(&d);
  FederationSettings settings;
  settings.hyper = hyper;
  settings.labels = data.classes;
  settings.threads = 1;
  const ColonyOutcome fed = run_colony(ptrs, settings);

  const FlyConfig config = hyper.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size());
  FlyNN central(config, data.classes, 1);
  central.fit(data);
  central.set_missing_policy(MissingPolicy::Mean);  // what the federation (and flynn train) records
  ASSERT_EQ(fed.model.counts(), central.counts()) << what;
  ASSERT_EQ(fed.model_file, io::serialize_model(central)) << what;
  // Every party reported the same checksum and its own rows.
  std::uint64_t rows = 0;
  for (std::size_t p = 0; p < fed.reports.size(); ++p) {
    EXPECT_EQ(fed.reports[p].model_crc32, io::model_checksum(fed.model_file));
    EXPECT_EQ(fed.rows[p], split[p].size());
    rows += fed.rows[p];
    // Without DP a party uploads exactly its L·cells counts once (m, and any pair cells).
    EXPECT_EQ(fed.reports[p].aggregate_traffic.bytes_sent, std::uint64_t(config.cells()) * data.classes.size() * 4);
    EXPECT_EQ(fed.reports[p].aggregate_traffic.collectives, 1u);
  }
  EXPECT_EQ(rows, data.n_rows);
}

TEST(FederatedParity, ExactOverManyRandomSplits) {
  const Dataset data = test::blobs(4, 40, 6, 17);
  SeededRng rng(2024);
  int checked = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const int tau = 1 + static_cast<int>(rng.uniform_below(7));
    const std::uint64_t seed = rng.next_u64();
    const double alpha = trial % 2 ? 0.1 : 2.0;
    std::vector<double> weights(tau);
    for (auto& w : weights) w = rng.uniform_below(4) == 0 ? 0.0 : 1.0 + rng.uniform_below(20);
    if (std::all_of(weights.begin(), weights.end(), [](double w) { return w == 0; })) weights[0] = 1;
    std::vector<SplitSpec> specs = {SplitSpec::parse("iid"), SplitSpec::parse("by-class"),
                                    SplitSpec::parse("dirichlet:" + std::to_string(alpha))};
    SplitSpec sizes;
    sizes.kind = SplitSpec::Kind::Sizes;
    sizes.weights = weights;
    specs.push_back(sizes);
    for (const SplitSpec& spec : specs) {
      const auto split = split_rows(data.labels, data.classes.size(), tau, spec, seed);
      HyperParams hyper = small_hyper(seed ^ 0x5555, trial % 3 ? 0.6 : 0.0);
      if (trial % 4 == 1) hyper.pairs = 3;  // second-order filters: their pair cells federate too
      expect_parity(data, split, hyper, spec.describe() + " tau=" + std::to_string(tau) +
                                            (hyper.pairs ? " pairs=3" : ""));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 48);
}

// The default variant's paper-half rule (FlyConfig::paper_half_min_columns) decides from
// the statistics of all rows, which a federation sums before counting: a party whose own
// rows would decide otherwise (here the only party with the loud column's large values,
// and parties without any) still hashes as central training does, and the file is the same.
TEST(FederatedParity, ThePaperHalfRuleDecidesFromThePooledStatistics) {
  Dataset data = test::blobs(3, 30, 20, 5, 1.0);
  // Every column centred and scaled to unit variance: the energy spreads over all 20.
  for (std::size_t j = 0; j < 20; ++j) {
    double sum = 0, sq = 0;
    for (std::size_t r = 0; r < data.n_rows; ++r) sum += data.row(r)[j];
    const double mean = sum / data.n_rows;
    for (std::size_t r = 0; r < data.n_rows; ++r) sq += (data.row(r)[j] - mean) * (data.row(r)[j] - mean);
    const double sd = std::sqrt(sq / data.n_rows);
    for (std::size_t r = 0; r < data.n_rows; ++r) data.row(r)[j] = static_cast<float>((data.row(r)[j] - mean) / sd);
  }
  for (std::size_t r = 0; r < data.n_rows; r += 3) data.row(r)[4] = (data.row(r)[4] + 3.0f) * 5000.0f;
  HyperParams hyper;  // the defaults: zsign-q+paper with the rule (d = 20)
  hyper.seed = 8;
  const FlyConfig config = hyper.resolve(20, 3);
  ASSERT_EQ(config.paper_half_min_columns, Defaults::paper_half_min_columns);
  FlyNN central(config, data.classes, 1);
  central.fit(data);
  central.set_missing_policy(MissingPolicy::Mean);  // what the federation (and flynn train) records
  ASSERT_FALSE(central.hasher().second_half_hashes_raw_row());
  std::vector<std::size_t> loud, quiet;
  for (std::size_t r = 0; r < data.n_rows; ++r) (r % 3 == 0 ? loud : quiet).push_back(r);
  std::vector<std::size_t> quiet_a, quiet_b;
  for (std::size_t i = 0; i < quiet.size(); ++i) (i % 2 ? quiet_b : quiet_a).push_back(quiet[i]);
  {
    // A party of quiet rows alone would keep the raw half.
    FlyNN alone(config, data.classes, 1);
    alone.fit(data.subset(quiet_a));
    ASSERT_TRUE(alone.hasher().second_half_hashes_raw_row());
  }
  expect_parity(data, {loud, quiet_a, quiet_b}, hyper, "loud rows at one party");
  expect_parity(data, split_rows(data.labels, 3, 4, SplitSpec::parse("iid"), 5), hyper, "iid");
}

TEST(FederatedParity, ByClassWithOneClassPerPartyAndEmptyParties) {
  const Dataset data = test::blobs(3, 30, 5, 4);
  // τ = L: party t holds exactly class t.
  expect_parity(data, split_rows(data.labels, 3, 3, SplitSpec::parse("by-class"), 1), small_hyper(9), "by-class");
  // Empty parties in between and at the ends.
  auto split = split_rows(data.labels, 3, 3, SplitSpec::parse("iid"), 1);
  split.insert(split.begin(), std::vector<std::size_t>{});
  split.push_back({});
  expect_parity(data, split, small_hyper(9), "empty parties");
  // Densify preprocessing and ratio hyper-parameters take the same path.
  HyperParams h;
  h.expansion_factor = 20;
  h.connection_sparsity = 0.4;
  h.wta_ratio = 0.05;
  h.preprocess = Preprocess::Densify;
  h.seed = 77;
  expect_parity(data, split_rows(data.labels, 3, 4, SplitSpec::parse("dirichlet:0.3"), 5), h, "densify");
}

// Runs train_party on a colony where each party has its own settings/input; returns each
// party's error message ("" = success).
std::vector<std::string> run_parties(const std::vector<const Dataset*>& data,
                                     const std::vector<FederationSettings>& settings,
                                     const std::vector<std::string>& load_errors = {}) {
  const int n = static_cast<int>(data.size());
  ThreadColony colony(n);
  std::vector<std::string> errors(n);
  std::vector<std::thread> t;
  for (int r = 0; r < n; ++r)
    t.emplace_back([&, r] {
      PartyInput in;
      in.data = data[r];
      if (r < static_cast<int>(load_errors.size())) in.error = load_errors[r];
      try {
        PartyResult res = train_party(colony.party(r), in, settings[r]);
        std::string file;
        compare_models(colony.party(r), res, file);
      } catch (const FederationError& e) {
        errors[r] = e.what();
      } catch (const std::exception& e) {
        errors[r] = std::string("NOT A FEDERATION ERROR: ") + e.what();
        colony.abort(e.what());
      }
    });
  for (auto& th : t) th.join();
  return errors;
}

TEST(FederatedAgreement, DifferingFieldRefusesEveryParty) {
  const Dataset data = test::blobs(2, 20, 6, 8);
  const auto split = split_rows(data.labels, 2, 3, SplitSpec::parse("iid"), 3);
  std::vector<Dataset> shards;
  for (const auto& rows : split) shards.push_back(data.subset(rows));
  const std::vector<const Dataset*> ptrs = {&shards[0], &shards[1], &shards[2]};
  FederationSettings base;
  base.hyper = small_hyper(5);
  base.labels = data.classes;
  base.threads = 1;

  struct Case {
    std::string field;
    std::function<void(FederationSettings&)> change;
  };
  const std::vector<Case> cases = {
      {"its m differs", [](FederationSettings& s) { s.hyper.m = 300; }},
      {"its s differs", [](FederationSettings& s) { s.hyper.s = 4; }},
      {"its rho differs", [](FederationSettings& s) { s.hyper.rho = 13; }},
      {"its gamma differs", [](FederationSettings& s) { s.hyper.gamma = 0.61; }},
      {"its preprocess differs", [](FederationSettings& s) { s.hyper.preprocess = Preprocess::None; }},
      {"its seed differs", [](FederationSettings& s) { s.hyper.seed = 6; }},
      {"its label list differs", [](FederationSettings& s) { s.labels = LabelSet({"c1", "c0"}); }},
      {"its differential privacy differs", [](FederationSettings& s) { s.dp = DpParams{1.0, 5}; }},
  };
  for (const Case& c : cases) {
    std::vector<FederationSettings> settings(3, base);
    c.change(settings[2]);
    const auto errors = run_parties(ptrs, settings);
    for (int r = 0; r < 3; ++r) {
      EXPECT_NE(errors[r].find("party 2 is refused"), std::string::npos) << c.field << ": " << errors[r];
      EXPECT_NE(errors[r].find(c.field), std::string::npos) << c.field << ": " << errors[r];
      EXPECT_EQ(errors[r], errors[0]);  // the same verdict everywhere
    }
  }
  // The paper half's rule (on a paper-half variant): a party with another threshold, or with
  // the rule where the others have none, is refused naming it.
  for (const std::uint64_t others : {0u, 4u}) {
    std::vector<FederationSettings> rule(3, base);
    for (auto& s : rule) {
      s.hyper.variant = parse_variant("anchor+paper");
      s.hyper.paper_half_min_columns = others;
    }
    rule[2].hyper.paper_half_min_columns = 6;
    for (const auto& e : run_parties(ptrs, rule)) {
      EXPECT_NE(e.find("party 2 is refused: its paper_half_min_columns differs"), std::string::npos) << e;
      EXPECT_NE(e.find(others ? "(6 vs 4)" : "(6 vs (none))"), std::string::npos) << e;
    }
  }
  // DP settings must agree too.
  std::vector<FederationSettings> dp(3, base);
  for (auto& s : dp) s.dp = DpParams{1.0, 5};
  dp[1].dp->epsilon = 2.0;
  for (const auto& e : run_parties(ptrs, dp)) EXPECT_NE(e.find("its dp-epsilon differs"), std::string::npos) << e;
  dp[1].dp->epsilon = 1.0;
  dp[1].dp->unit = DpUnit::Record;
  for (const auto& e : run_parties(ptrs, dp)) EXPECT_NE(e.find("its dp-unit differs"), std::string::npos) << e;
  dp[1].dp->unit = DpUnit::Paper;
  dp[1].dp->postprocess = DpPostprocess::Threshold;
  for (const auto& e : run_parties(ptrs, dp)) EXPECT_NE(e.find("its dp-postprocess differs"), std::string::npos) << e;
  // A party that gives no seed accepts party 0's.
  std::vector<FederationSettings> seeds(3, base);
  seeds[1].hyper.seed.reset();
  for (const auto& e : run_parties(ptrs, seeds)) EXPECT_EQ(e, "");
  // Without --seed anywhere party 0 draws one: all agree, and it is not the default.
  std::vector<FederationSettings> drawn(3, base);
  for (auto& s : drawn) s.hyper.seed.reset();
  for (const auto& e : run_parties(ptrs, drawn)) EXPECT_EQ(e, "");
}

TEST(FederatedAgreement, UnreadableShardOrBadLabelStopsEveryParty) {
  const Dataset data = test::blobs(3, 10, 4, 2);
  FederationSettings s;
  s.hyper = small_hyper(1);
  s.labels = data.classes;
  s.threads = 1;
  const std::vector<FederationSettings> settings(3, s);
  // Party 1 could not read its shard.
  const auto errors = run_parties({&data, nullptr, &data}, settings, {"", "shard_1.csv: cannot open", ""});
  for (const auto& e : errors) {
    EXPECT_NE(e.find("party 1 says: \"shard_1.csv: cannot open"), std::string::npos) << e;
    EXPECT_EQ(e, errors[0]);
  }
  // Party 2's data holds a label outside the list: named with its file and line.
  Dataset bad = test::make_dataset({{1, 2, 3, 4}, {4, 3, 2, 1}}, {"c0", "zebra"});
  bad.source = "shard_2.csv";
  for (const auto& e : run_parties({&data, &data, &bad}, settings))
    EXPECT_NE(e.find("party 2 says: \"shard_2.csv:2: label 'zebra' is not one of the known classes"),
              std::string::npos) << e;
  // Different feature counts are a fingerprint difference (d).
  const Dataset narrow = test::blobs(3, 10, 3, 2);
  for (const auto& e : run_parties({&data, &narrow}, {s, s}))
    EXPECT_NE(e.find("its d (input dimension) differs"), std::string::npos) << e;
  // Invalid hyper-parameters on one party.
  FederationSettings invalid = s;
  invalid.hyper.rho = 1000;
  for (const auto& e : run_parties({&data, &data}, {s, invalid}))
    EXPECT_NE(e.find("party 1 says: \"rho = 1000"), std::string::npos) << e;
  // All parties empty: no classifier can be trained.
  const Dataset empty = data.subset({});
  for (const auto& e : run_parties({&empty, &empty}, {s, s}))
    EXPECT_NE(e.find("at least two"), std::string::npos) << e;
  // run_colony rethrows the federation's error.
  EXPECT_THROW(run_colony({&data, nullptr}, s, {"", "gone"}), FederationError);
}

TEST(FederatedDp, ReleaseShapeProvenanceAndAccounting) {
  const Dataset data = test::blobs(2, 200, 8, 12, 0.3);
  const auto split = split_rows(data.labels, 2, 3, SplitSpec::parse("iid"), 1);
  std::vector<Dataset> shards;
  for (const auto& rows : split) shards.push_back(data.subset(rows));
  FederationSettings s;
  s.hyper = small_hyper(3, 0.9);
  s.labels = data.classes;
  s.threads = 1;
  s.dp = DpParams{2.0, 40, DpExponent::Paper};
  const ColonyOutcome out = run_colony({&shards[0], &shards[1], &shards[2]}, s);
  const Provenance& p = out.model.provenance();
  EXPECT_TRUE(p.differentially_private);
  EXPECT_EQ(p.epsilon, 2.0);
  EXPECT_EQ(p.dp_T, 40u);
  EXPECT_EQ(p.dp_parties, 3u);
  ASSERT_TRUE(out.privacy.has_value());
  EXPECT_NEAR(out.privacy->total, 2.0, 1e-12);
  EXPECT_NEAR(out.privacy->per_party, 2.0 / 3, 1e-12);
  // At most τ·T entries are non-zero; rows per class are not released.
  EXPECT_LE(out.model.counts().nonzero(), 3u * 40u);
  EXPECT_EQ(out.model.counts().rows_per_class(), (std::vector<std::uint64_t>{0, 0}));
  for (const PartyReport& r : out.reports) {
    EXPECT_FALSE(r.rows.has_value());
    EXPECT_EQ(r.aggregate_traffic.bytes_sent, 4u + 40u * 8u);  // T (index, value) pairs
    EXPECT_EQ(r.aggregate_traffic.bytes_received, 2u * (4u + 40u * 8u));
  }
  // The file round-trips with its provenance.
  const io::ModelContents mc = io::parse_model(out.model_file, "dp");
  EXPECT_EQ(mc.provenance, p);
  // T larger than m·L is refused on every party.
  s.dp->T = 256 * 2 + 1;
  EXPECT_THROW(run_colony({&shards[0], &shards[1]}, s), FederationError);

  // Second-order filters: the release picks among all L·(m + pair cells) counts (a row
  // still changes each by at most 1: its pair cells are distinct), so T may exceed L·m.
  s.hyper.pairs = 2;
  s.dp->T = 256 * 2 + 1;
  const ColonyOutcome pairs = run_colony({&shards[0], &shards[1], &shards[2]}, s);
  const FlyConfig c = s.hyper.resolve(8, 2);
  EXPECT_EQ(pairs.model.counts().m(), c.cells());
  EXPECT_EQ(pairs.model.config().pairs, 2u);
  EXPECT_LE(pairs.model.counts().nonzero(), 3u * (256u * 2 + 1));
  EXPECT_TRUE(pairs.model.provenance().differentially_private);
  EXPECT_EQ(io::parse_model(pairs.model_file, "dp pairs").config.pairs, 2u);
  s.dp->T = c.cells() * 2 + 1;
  EXPECT_THROW(run_colony({&shards[0], &shards[1]}, s), FederationError);
}

}  // namespace
}  // namespace flynn::federated

namespace flynn::federated {
namespace {

// Under DP each party checks the released model on its own rows (locally) and warns when
// it is no better than the party's most frequent class; the released model records the
// parties' missing-value policy and a calibration from public quantities only.
TEST(FederatedDp, EachPartyChecksTheReleaseOnItsRowsAndTheModelKeepsItsInputPolicy) {
  // 300 rows of c0 and 75 of c1: a release must beat answering c0 (0.8) to be useful.
  const Dataset both = test::blobs(2, 300, 6, 21, 0.4);
  std::vector<std::size_t> kept;
  for (std::size_t r = 0; r < both.n_rows; ++r)
    if (r % 2 == 0 || r % 8 == 1) kept.push_back(r);
  const Dataset data = both.subset(kept);
  std::vector<Dataset> shards(3);
  for (int p = 0; p < 3; ++p) {
    std::vector<std::size_t> rows;
    for (std::size_t r = static_cast<std::size_t>(p); r < data.n_rows; r += 3) rows.push_back(r);
    shards[static_cast<std::size_t>(p)] = data.subset(rows);
  }
  std::vector<const Dataset*> ptrs;
  for (const Dataset& d : shards) ptrs.push_back(&d);
  FederationSettings s;
  s.hyper.variant = Variant{};  // the paper's method: no statistics of the rows
  s.hyper.m = 64;
  s.hyper.rho = 4;
  s.hyper.seed = 3;
  s.labels = data.classes;
  s.threads = 1;
  s.missing = MissingPolicy::Zero;
  s.dp = DpParams{1000.0, 128};  // every entry, at a budget at which the release keeps the counts
  const ColonyOutcome useful = run_colony(ptrs, s);
  EXPECT_EQ(useful.model.calibration().source, CalibrationSource::Public);
  EXPECT_EQ(useful.model.missing_policy(), MissingPolicy::Zero);
  EXPECT_EQ(io::deserialize_model(useful.model_file, "dp", 1).missing_policy(), MissingPolicy::Zero);
  ASSERT_EQ(useful.release_warnings.size(), 3u);
  for (const std::string& w : useful.release_warnings) EXPECT_EQ(w, "");
  // Control: parties of one class each, whose rows nothing can answer better than their
  // one class, under noise far above every count: each party is told, with what would help.
  std::vector<Dataset> one_class(3);
  for (int p = 0; p < 3; ++p) {
    std::vector<std::size_t> rows;
    for (std::size_t r = 0; r < data.n_rows; ++r) {
      const bool c0 = data.labels[r] == 0;
      if (p == 2 ? !c0 : (c0 && r % 2 == static_cast<std::size_t>(p))) rows.push_back(r);
    }
    one_class[static_cast<std::size_t>(p)] = data.subset(rows);
  }
  std::vector<const Dataset*> single;
  for (const Dataset& d : one_class) single.push_back(&d);
  s.dp = DpParams{0.001, 1};
  const ColonyOutcome useless = run_colony(single, s);
  ASSERT_EQ(useless.release_warnings.size(), 3u);
  for (const std::string& w : useless.release_warnings) {
    EXPECT_NE(w.find("no better than always answering its most frequent class"), std::string::npos) << w;
    EXPECT_NE(w.find("--dp-epsilon"), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace flynn::federated
