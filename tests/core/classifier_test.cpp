// FlyNN classifier: a hand-computed example of Algorithm 1, scoring with γ = 0 and γ > 0,
// tie rules, and the exactness of partial_fit / forget / merge.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <span>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/metrics.hpp"
#include "flynn/random.hpp"
#include "flynn/scoring.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::blobs;
using test::make_dataset;

// The paper's method at the default m, s, rho, gamma: these exactness tests state the
// paper variant's semantics (variants_test.cpp covers the standardising variants' rule,
// statistics fixed at first fit).
HyperParams paper_hyper() {
  HyperParams h;
  h.variant = Variant{};
  return h;
}

FlyConfig tiny_config(double gamma, std::uint32_t rho = 2) {
  // seed 5489, d=4, m=6, s=2: units read columns {0,1} {0,2} {1,3} {2,3} {1,2} {2,3}
  // (pinned by LiftingMatrix.GoldenSmall).
  FlyConfig c;
  c.input_dim = 4;
  c.m = 6;
  c.s = 2;
  c.rho = rho;
  c.gamma = gamma;
  c.seed = 5489;
  c.preprocess = Preprocess::None;
  return c;
}

Dataset tiny_training_set() {
  // Hashes (worked by hand from the unit columns above):
  //   a1 (3,2,.5,0): activations 5,3.5,2,.5,2.5,.5  → {0,1}
  //   a2 (2,3,0,.5): activations 5,2,3.5,.5,3,.5    → {0,2}
  //   b1 (0,.5,2,3): activations .5,2,3.5,5,2.5,5   → {3,5}
  //   b2 (.5,0,3,2): activations .5,3.5,2,5,3,5     → {3,5}
  return make_dataset({{3, 2, 0.5f, 0}, {2, 3, 0, 0.5f}, {0, 0.5f, 2, 3}, {0.5f, 0, 3, 2}},
                      {"A", "A", "B", "B"});
}

TEST(FlyNN, HandComputedAlgorithm1) {
  FlyNN model(tiny_config(0.5), LabelSet({"A", "B"}), 1);
  model.fit(tiny_training_set());
  // Counts: A has unit0=2, unit1=1, unit2=1; B has unit3=2, unit5=2.
  const std::vector<std::uint32_t> a = {2, 1, 1, 0, 0, 0}, b = {0, 0, 0, 2, 0, 2};
  EXPECT_EQ(std::vector<std::uint32_t>(model.counts().of_class(0), model.counts().of_class(0) + 6), a);
  EXPECT_EQ(std::vector<std::uint32_t>(model.counts().of_class(1), model.counts().of_class(1) + 6), b);
  EXPECT_EQ(model.counts().rows_per_class(), (std::vector<std::uint64_t>{2, 2}));

  // q1 = (3,2,.5,0) → {0,1}: score_A = .5² + .5¹ = .75, score_B = 1 + 1 = 2 → A.
  // q2 = (0,0,3,2)  → activations 0,3,2,5,3,5 → {3,5}: score_A = 2, score_B = .25+.25 → B.
  const Dataset q = make_dataset({{3, 2, 0.5f, 0}, {0, 0, 3, 2}}, {});
  const auto s = model.scores(q);
  EXPECT_DOUBLE_EQ(s[0], 0.75);
  EXPECT_DOUBLE_EQ(s[1], 2.0);
  EXPECT_DOUBLE_EQ(s[2], 2.0);
  EXPECT_DOUBLE_EQ(s[3], 0.5);
  EXPECT_EQ(model.predict(q), (std::vector<std::uint32_t>{0, 1}));
  // Probabilities: (1 − w)·softmax(-score/(rho·t)) + w·π with equal priors (2 rows each) →
  // p_A(q1) = (1 − w) / (1 + e^{-(2-.75)/(2t)}) + w/2, at a set t = 1 and w = 0.2.
  model.set_calibration(Calibration{1.0, 0.2, CalibrationSource::Given, 0});
  auto p = model.predict_proba(q);
  EXPECT_NEAR(p[0], 0.8 / (1.0 + std::exp(-0.625)) + 0.1, 1e-12);
  EXPECT_NEAR(p[0] + p[1], 1.0, 1e-12);
  EXPECT_NEAR(p[2] + p[3], 1.0, 1e-12);
}

TEST(FlyNN, ClassesAndProbabilitiesFromScoresEqualPredictAndPredictProba) {
  FlyNN model(tiny_config(0.5), LabelSet({"A", "B"}), 1);
  model.fit(tiny_training_set());
  const Dataset q = make_dataset({{3, 2, 0.5f, 0}, {0, 0, 3, 2}}, {});
  std::vector<double> s = model.scores(q);
  model.to_probabilities(s, 2);
  EXPECT_EQ(s, model.predict_proba(q));
  EXPECT_EQ(model.classes_of_probabilities(s, 2), model.predict(q));
  // A score vector of the wrong shape is refused, not read past its end.
  std::vector<double> short_scores(3, 0.0);
  EXPECT_THROW(model.classes_of_probabilities(short_scores, 2), Error);
  EXPECT_THROW(model.to_probabilities(short_scores, 2), Error);
}

TEST(FlyNN, HashGivesTheWinnersItCountsAndScores) {
  FlyNN model(tiny_config(0.5), LabelSet({"A", "B"}), 1);
  const Dataset train = tiny_training_set();
  model.fit(train);
  // The hand-worked hashes of tiny_training_set, in ascending unit order.
  EXPECT_EQ(model.hash(DataView(train)), (std::vector<std::uint32_t>{0, 1, 0, 2, 3, 5, 3, 5}));
  EXPECT_THROW(model.hash(DataView(train.features.data(), 2, 3)), Error);  // wrong width

  // At the defaults (a standardising variant): each class's counts are the tally of its
  // rows' hashes, and each score sums the scoring table over the row's hash.
  const Dataset data = blobs(3, 40, 12, 7);
  FlyNN big(HyperParams{}.resolve(12, 3), data.classes, 2);
  big.fit(data);
  const std::uint32_t rho = big.config().rho, m = big.config().m;
  const std::vector<std::uint32_t> winners = big.hash(DataView(data));
  ASSERT_EQ(winners.size(), data.n_rows * rho);
  ClassCounts tally(3, m);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    EXPECT_TRUE(std::is_sorted(winners.begin() + r * rho, winners.begin() + (r + 1) * rho));
    tally.add_row(data.labels[r], winners.data() + r * rho, rho);
  }
  EXPECT_EQ(tally.values(), big.counts().values());
  const std::vector<double> table =
      scoring_table(big.counts(), big.config().gamma, big.config().filter_scoring);
  const std::vector<double> scores = big.scores(data);
  std::vector<double> expected(3);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    score_winners(winners.data() + r * rho, rho, table.data(), 3, expected.data());
    for (std::size_t l = 0; l < 3; ++l) EXPECT_DOUBLE_EQ(scores[r * 3 + l], expected[l]);
  }
}

TEST(FlyNN, BinaryFiltersWithGammaZero) {
  FlyNN model(tiny_config(0.0), LabelSet({"A", "B"}), 1);
  model.fit(tiny_training_set());
  // γ = 0: score = number of winners the class has never seen. q1 → {0,1}: A 0, B 2.
  const Dataset q = make_dataset({{3, 2, 0.5f, 0}, {0, 0, 3, 2}}, {});
  const auto s = model.scores(q);
  EXPECT_EQ(s, (std::vector<double>{0, 2, 2, 0}));
}

TEST(FlyNN, TieBreakLowestClassAndSeededRandom) {
  // An untrained model scores every class rho: every row is a full tie.
  FlyNN model(tiny_config(0.5), LabelSet({"x", "y", "z"}), 1);
  Dataset q = make_dataset(std::vector<std::vector<float>>(300, {1, 2, 3, 4}), {});
  const auto lowest = model.predict(q);
  for (auto p : lowest) EXPECT_EQ(p, 0u);
  PredictOptions o;
  o.tie_break = TieBreak::Random;
  o.tie_seed = 9;
  const auto r1 = model.predict(q, o), r2 = model.predict(q, o);
  EXPECT_EQ(r1, r2);  // reproducible
  std::vector<int> hist(3);
  for (auto p : r1) ++hist[p];
  for (int h : hist) EXPECT_GT(h, 60);  // roughly uniform over the 3 tied classes
}

TEST(FlyNN, LearnsSeparableBlobs) {
  const Dataset train = blobs(4, 100, 10, 1, 0.3);
  FlyConfig c = paper_hyper().resolve(10, 4);
  FlyNN model(c, train.classes, 2);
  model.fit(train);
  const auto pred = model.predict(train);
  EXPECT_GT(accuracy(train.labels, pred), 0.95);
}

TEST(FlyNN, PartialFitEqualsFit) {
  const Dataset all = blobs(3, 200, 12, 2);
  std::vector<std::size_t> first(250), second(350);
  std::iota(first.begin(), first.end(), 0);
  std::iota(second.begin(), second.end(), 250);
  const FlyConfig c = paper_hyper().resolve(12, 3);
  FlyNN whole(c, all.classes, 2), parts(c, all.classes, 1);
  whole.fit(all);
  parts.partial_fit(all.subset(first));
  parts.partial_fit(all.subset(second));
  EXPECT_EQ(whole.counts(), parts.counts());
}

// A call of one row adds its codes in place (a fresh table of counts would cost more than
// hashing it): row by row, both forms, a standardising variant with pair cells, on every
// SIMD target, the counts equal one fit of all the rows; a count that would overflow fails
// and leaves the model unchanged.
TEST(FlyNN, PartialFitRowByRowEqualsFitAndRefusesOverflow) {
  const Dataset all = blobs(3, 40, 12, 7);
  for (const char* variant : {"paper", "zsign-q+paper"}) {
    SCOPED_TRACE(variant);
    HyperParams h = paper_hyper();
    h.variant = parse_variant(variant);
    h.pairs = 2;
    const FlyConfig c = h.resolve(12, 3);
    FlyNN whole(c, all.classes, 1);
    whole.fit(all);
    FlyNN rows(c, all.classes, 2), views(c, all.classes, 1);
    if (c.variant.standardize) {
      rows.set_feature_stats(whole.feature_stats());
      views.set_feature_stats(whole.feature_stats());
    }
    const std::vector<std::uint32_t> ids = all.row_class_ids_in(all.classes);
    for (std::size_t i = 0; i < all.n_rows; ++i) {
      rows.partial_fit(all.subset({i}));
      views.partial_fit(DataView(all.row(i), 1, all.n_features), std::span(ids).subspan(i, 1));
    }
    EXPECT_EQ(rows.counts(), whole.counts());
    EXPECT_EQ(views.counts(), whole.counts());
  }
  FlyNN full(paper_hyper().resolve(12, 3), all.classes, 1);
  full.fit(all);
  ClassCounts at_max = full.counts();
  for (auto& v : at_max.values())
    if (v) v = std::numeric_limits<std::uint32_t>::max();
  full.set_counts(at_max);
  try {
    full.partial_fit(all.subset({0}));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("count overflow"), std::string::npos) << e.what();
  }
  EXPECT_EQ(full.counts(), at_max);
}

TEST(FlyNN, ForgetIsExactUnlearning) {
  const Dataset all = blobs(3, 200, 12, 3);
  SeededRng r(4);
  std::vector<std::size_t> keep, drop;
  for (std::size_t i = 0; i < all.n_rows; ++i) (r.uniform01() < 0.3 ? drop : keep).push_back(i);
  const FlyConfig c = paper_hyper().resolve(12, 3);
  FlyNN full(c, all.classes, 2), kept(c, all.classes, 2);
  full.fit(all);
  kept.fit(all.subset(keep));
  full.forget(all.subset(drop));
  EXPECT_EQ(full.counts(), kept.counts());
  // Forgetting rows that were never learned fails and leaves the model unchanged.
  const ClassCounts before = full.counts();
  const Dataset stranger = blobs(3, 50, 12, 99, 5.0);
  FlyNN empty(c, all.classes, 1);
  EXPECT_THROW(empty.forget(stranger), Error);
  EXPECT_EQ(full.counts(), before);
}

TEST(FlyNN, MergeEqualsTrainingOnTheUnion) {
  const Dataset all = blobs(5, 80, 9, 5);
  std::vector<std::size_t> a, b;
  for (std::size_t i = 0; i < all.n_rows; ++i) (i % 3 == 0 ? a : b).push_back(i);
  const FlyConfig c = paper_hyper().resolve(9, 5);
  FlyNN whole(c, all.classes), left(c, all.classes), right(c, all.classes);
  whole.fit(all);
  left.fit(all.subset(a));
  right.fit(all.subset(b));
  left.merge(right);
  EXPECT_EQ(left.counts(), whole.counts());
}

TEST(FlyNN, MergeRejectsDifferentConfigOrLabels) {
  const FlyConfig c = paper_hyper().resolve(9, 2);
  FlyConfig other = c;
  other.seed += 1;
  FlyNN a(c, LabelSet({"p", "q"})), b(other, LabelSet({"p", "q"})), d(c, LabelSet({"q", "p"}));
  try {
    a.merge(b);
    FAIL() << "merge with a different seed succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seed"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.merge(d), Error);
}

// A model whose counts are a DP release claims its ε: FlyNN itself refuses exact rows on
// top of it (partial_fit, both forms), merges with it (DP or not: the ledger of a release
// is federated aggregation's, not a sum of counts) and forgetting, each leaving the model
// unchanged and naming why; fit() starts over with exact counts and an exact provenance.
TEST(FlyNN, DifferentiallyPrivateReleaseTakesNoExactRows) {
  const Dataset all = blobs(3, 60, 8, 7);
  const FlyConfig c = paper_hyper().resolve(8, 3);
  FlyNN released(c, all.classes, 1), exact(c, all.classes, 1);
  released.fit(all);
  exact.fit(all);
  Provenance dp;
  dp.differentially_private = true;
  dp.epsilon = 2.5;
  dp.dp_T = 40;
  dp.dp_parties = 3;
  released.set_provenance(dp);
  const ClassCounts before = released.counts();
  const auto message_of = [](const auto& call) {
    try {
      call();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string added = message_of([&] { released.partial_fit(all); });
  EXPECT_NE(added.find("differentially private"), std::string::npos) << added;
  EXPECT_NE(added.find("epsilon=2.5"), std::string::npos) << added;
  EXPECT_NE(added.find("not be covered"), std::string::npos) << added;
  const std::vector<std::uint32_t> ids(all.labels.begin(), all.labels.end());
  EXPECT_NE(message_of([&] { released.partial_fit(DataView(all), ids); }).find("epsilon"),
            std::string::npos);
  EXPECT_NE(message_of([&] { released.forget(all); }).find("differentially private"),
            std::string::npos);
  for (FlyNN* other : {&exact, &released}) {
    EXPECT_NE(message_of([&] { released.merge(*other); }).find("differentially private"),
              std::string::npos);
  }
  EXPECT_NE(message_of([&] { exact.merge(released); }).find("differentially private"),
            std::string::npos);
  EXPECT_EQ(released.counts(), before);
  EXPECT_EQ(released.provenance(), dp);
  EXPECT_EQ(exact.counts(), before);
  // fit() forgets the release: exact counts of the new rows, exact provenance, and then
  // the exact rules again.
  released.fit(all);
  EXPECT_EQ(released.provenance(), Provenance{});
  released.partial_fit(all);
  exact.partial_fit(all);
  EXPECT_EQ(released.counts(), exact.counts());
}

TEST(FlyNN, UnknownLabelNamesFileAndLine) {
  FlyNN model(tiny_config(0.5), LabelSet({"A", "B"}), 1);
  Dataset data = make_dataset({{1, 2, 3, 4}, {4, 3, 2, 1}}, {"A", "C"});
  data.source = "train.csv";
  data.row_origin = {2, 7};
  try {
    model.fit(data);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.csv:7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'C'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(model.counts().total_rows(), 0u);
}

TEST(FlyNN, WrongFeatureCountIsRejected) {
  FlyNN model(tiny_config(0.5), LabelSet({"A", "B"}), 1);
  const Dataset data = make_dataset({{1, 2, 3}}, {"A"});
  EXPECT_THROW(model.fit(data), Error);
  EXPECT_THROW(model.predict(data), Error);
}

TEST(FlyNN, ResultsIndependentOfThreads) {
  const Dataset all = blobs(4, 500, 16, 6);
  const FlyConfig c = paper_hyper().resolve(16, 4);
  FlyNN one(c, all.classes, 1), many(c, all.classes, 4);
  one.fit(all);
  many.fit(all);
  EXPECT_EQ(one.counts(), many.counts());
  EXPECT_EQ(one.predict(all), many.predict(all));
}

}  // namespace
}  // namespace flynn

namespace flynn {
namespace {

TEST(Scoring, BitPackedBinaryFiltersEqualTheTable) {
  SeededRng r(21);
  for (std::size_t L : {2u, 7u, 64u}) {
    ClassCounts counts(L, 500);
    for (auto& c : counts.values()) c = r.uniform01() < 0.7 ? 0 : static_cast<std::uint32_t>(r.uniform_below(4));
    const auto table = filter_table(counts, 0.0);
    const FilterScorer scorer(counts, 0.0, 16);
    std::vector<std::uint32_t> w(16);
    std::vector<double> a(L), b(L);
    for (int trial = 0; trial < 50; ++trial) {
      for (auto& x : w) x = static_cast<std::uint32_t>(r.uniform_below(500));
      score_winners(w.data(), 16, table.data(), L, a.data());
      scorer.score(w.data(), b.data());
      ASSERT_EQ(a, b);
    }
  }
}

}  // namespace
}  // namespace flynn

namespace flynn {
namespace {

// The scorer is built once per change of the counts and reused: a row predicted alone, in a
// batch, before and after partial_fit / forget / merge gives the scores of a model built
// afresh from the same counts (the default variant: two halves, each hashed one row at a time).
TEST(FlyNN, OneRowScoresEqualBatchScoresAndFollowEveryChangeOfTheCounts) {
  const Dataset a = test::blobs(3, 40, 12, 21), b = test::blobs(3, 20, 12, 22);
  HyperParams p;
  p.m = 400;
  p.seed = 9;
  const FlyConfig config = p.resolve(12, 3);
  FlyNN model(config, a.classes, 1);
  model.fit(a);
  const auto fresh_scores = [&](const Dataset& rows) {
    FlyNN copy(config, model.labels(), model.counts(), 1);
    copy.set_feature_stats(model.feature_stats());
    return copy.scores(rows);
  };
  const auto check = [&](const char* when) {
    const std::vector<double> batch = model.scores(b);
    EXPECT_EQ(batch, fresh_scores(b)) << when;
    const std::size_t L = model.labels().size();
    for (std::size_t r = 0; r < b.n_rows; ++r) {
      const std::vector<double> one = model.scores(DataView(b.row(r), 1, b.n_features));
      ASSERT_TRUE(std::equal(one.begin(), one.end(), batch.begin() + r * L)) << when << " row " << r;
    }
  };
  check("after fit");
  model.partial_fit(b);
  check("after partial_fit");
  model.forget(b);
  check("after forget");
  FlyNN other(config, a.classes, 1);
  other.set_feature_stats(model.feature_stats());
  other.partial_fit(b);
  model.merge(other);
  check("after merge");
}

}  // namespace
}  // namespace flynn

namespace flynn {
namespace {

// FilterScoring::Relative: each class's filter values divided by their mean over the m units.
TEST(Scoring, RelativeScoresDivideEachClassByItsMeanFilterValue) {
  SeededRng r(23);
  const std::size_t L = 5;
  const std::uint32_t m = 300, rho = 12;
  ClassCounts counts(L, m);
  for (auto& c : counts.values()) c = r.uniform01() < 0.6 ? 0 : static_cast<std::uint32_t>(r.uniform_below(6));
  for (std::uint32_t i = 0; i < m; ++i) counts.of_class(4)[i] = 1 + i % 3;  // class 4 has seen every unit
  std::vector<std::uint32_t> w(rho);
  for (double gamma : {0.0, 0.5, 0.8}) {
    SCOPED_TRACE(gamma);
    const std::vector<double> table = filter_table(counts, gamma);
    std::vector<double> scale(L, 0.0);
    for (std::uint32_t i = 0; i < m; ++i)
      for (std::size_t l = 0; l < L; ++l) scale[l] += table[std::size_t(i) * L + l];
    for (double& s : scale) s = s > 0.0 ? m / s : 1.0;  // γ = 0: class 4's values are all 0
    const FilterScorer relative(counts, gamma, rho, {}, FilterScoring::Relative);
    const FilterScorer absolute(counts, gamma, rho, {}, FilterScoring::Absolute);
    std::vector<double> got(L), plain(L), want(L);
    for (int trial = 0; trial < 40; ++trial) {
      for (auto& x : w) x = static_cast<std::uint32_t>(r.uniform_below(m));
      relative.score(w.data(), got.data());
      absolute.score(w.data(), plain.data());
      std::fill(want.begin(), want.end(), 0.0);
      for (std::uint32_t k = 0; k < rho; ++k)
        for (std::size_t l = 0; l < L; ++l) want[l] += table[std::size_t(w[k]) * L + l] * scale[l];
      ASSERT_EQ(got, want);
      for (std::size_t l = 0; l < L; ++l) EXPECT_NEAR(got[l], plain[l] * scale[l], 1e-9 * (1.0 + got[l]));
    }
  }
}

// Two classes, 240 rows against 24, hashed densely (ρ/m = 1/4): the large class's counts
// sit at every unit, so its absolute scores are low for every row and it takes the small
// class's rows too; relative scores remove that background and find the small class.
TEST(Scoring, RelativeScoringStopsTheLargeClassWinningEveryRow) {
  const Dataset all = test::blobs(2, 300, 8, 41, 0.9);
  std::vector<std::size_t> train, test;
  std::size_t seen[2] = {0, 0};
  for (std::size_t i = 0; i < all.n_rows; ++i) {
    const std::uint32_t y = all.labels[i];
    const std::size_t k = seen[y]++;
    if (k >= 240) test.push_back(i);
    else if (y == 0 || k < 24) train.push_back(i);
  }
  HyperParams h;
  h.m = 400;
  h.rho = 100;
  h.gamma = 0.9;
  h.variant = parse_variant("zsign");
  const Dataset tr = all.subset(train), te = all.subset(test);
  std::vector<double> recall_of_small;
  for (FilterScoring scoring : {FilterScoring::Absolute, FilterScoring::Relative}) {
    h.filter_scoring = scoring;
    FlyNN model(h.resolve(8, 2), all.classes, 1);
    model.fit(tr);
    const std::vector<std::uint32_t> p = model.predict(te);
    std::size_t small = 0, hit = 0;
    for (std::size_t i = 0; i < te.n_rows; ++i)
      if (te.labels[i] == 1) ++small, hit += p[i] == 1;
    recall_of_small.push_back(static_cast<double>(hit) / static_cast<double>(small));
  }
  EXPECT_LT(recall_of_small[0], 0.5);
  EXPECT_GT(recall_of_small[1], 0.9);
}

// The factors follow the counts: a relative model after merge or forget predicts as the
// model trained on the same rows (the scorer cache is rebuilt with the counts).
TEST(Scoring, RelativeModelsMergeAndForgetExactly) {
  const Dataset all = test::blobs(3, 90, 10, 43, 1.2);
  std::vector<std::size_t> a, b;
  for (std::size_t i = 0; i < all.n_rows; ++i) (i % 4 == 0 ? a : b).push_back(i);
  HyperParams h;
  h.m = 600;
  h.rho = 60;
  h.variant = parse_variant("sign");
  const FlyConfig c = h.resolve(10, 3);
  ASSERT_EQ(c.filter_scoring, FilterScoring::Relative);
  FlyNN whole(c, all.classes, 1), left(c, all.classes, 1), right(c, all.classes, 1), only_b(c, all.classes, 1);
  whole.fit(all);
  left.fit(all.subset(a));
  EXPECT_EQ(left.predict(all).size(), all.n_rows);  // builds left's scorer before the merge
  right.fit(all.subset(b));
  only_b.fit(all.subset(b));
  left.merge(right);
  EXPECT_EQ(left.scores(all), whole.scores(all));
  whole.forget(all.subset(a));
  EXPECT_EQ(whole.scores(all), only_b.scores(all));
}

}  // namespace
}  // namespace flynn
