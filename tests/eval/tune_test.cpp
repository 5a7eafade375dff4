// The tune API (search + calibration), the calibration metrics against hand-computed values,
// out-of-fold scores and the search's time limit (standardised kNN: tests/baselines/knn_cv_test.cpp;
// `flynn tune` end to end: tests/cli/tune_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "flynn/error.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/eval/tune.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/scoring.hpp"
#include "test_support.hpp"

namespace flynn::eval {
namespace {

TEST(Calibration, LogLossMatchesHandComputedValue) {
  // Rows: true class 0 with p = 0.7; true class 1 with p = 0.25; true class 2 with p = 0.
  const std::vector<double> p = {0.7, 0.2, 0.1, 0.5, 0.25, 0.25, 0.6, 0.4, 0.0};
  const double expected = -(std::log(0.7) + std::log(0.25) + std::log(1e-15)) / 3.0;
  EXPECT_NEAR(log_loss(p, 3, {0, 1, 2}), expected, 1e-12);
  EXPECT_THROW(log_loss(p, 3, {0, 1}), Error);     // 9 values for 2 rows
  EXPECT_THROW(log_loss(p, 3, {0, 1, 3}), Error);  // label out of range
  EXPECT_THROW(log_loss({}, 3, {}), Error);
}

TEST(Calibration, EceMatchesHandComputedValue) {
  // Four binary rows; confidences 0.9 (correct), 0.9 (wrong), 0.62 (correct), 0.55 (wrong).
  // 15 bins of width 1/15: 0.9 → bin 13 (0.8667, 0.9333]; 0.62 → bin 9 (0.6, 0.6667];
  // 0.55 → bin 8 (0.5333, 0.6]. Σ n_b·|acc_b − conf_b| = 2·|0.5 − 0.9| + |1 − 0.62| + |0 − 0.55|.
  const std::vector<double> p = {0.9, 0.1, 0.9, 0.1, 0.38, 0.62, 0.55, 0.45};
  const std::vector<std::uint32_t> y = {0, 1, 1, 1};
  EXPECT_NEAR(expected_calibration_error(p, 2, y), (0.8 + 0.38 + 0.55) / 4.0, 1e-12);
  // One bin: |mean accuracy − mean confidence| = |0.5 − 0.7425|.
  EXPECT_NEAR(expected_calibration_error(p, 2, y, 1), 0.2425, 1e-12);
  // Perfectly confident and right: 0.
  EXPECT_DOUBLE_EQ(expected_calibration_error({1.0, 0.0, 0.0, 1.0}, 2, {0, 1}), 0.0);
  EXPECT_THROW(expected_calibration_error(p, 2, y, 0), Error);
}

TEST(Calibration, ProbabilitiesMixTheScoresSoftmaxWithThePriors) {
  // Scores of one row, ρ = 10, t = 0.5, prior weight 0.2: 0.8·softmax(−s/5) + 0.2·π.
  const std::vector<double> s = {2.0, 7.0, 2.0};
  const std::vector<double> pri = {0.5, 0.25, 0.25};
  const Calibration cal{0.5, 0.2, CalibrationSource::Given, 0};
  const auto p = scores_to_probabilities(s, 3, 10, cal, pri);
  const double a = 1.0, b = std::exp(-1.0), c = 1.0;
  EXPECT_NEAR(p[0], 0.8 * a / (a + b + c) + 0.2 * 0.5, 1e-12);
  EXPECT_NEAR(p[1], 0.8 * b / (a + b + c) + 0.2 * 0.25, 1e-12);
  EXPECT_NEAR(p[2], 0.8 * c / (a + b + c) + 0.2 * 0.25, 1e-12);
  // Tied scores: the prior orders them.
  const auto tie = scores_to_probabilities({3.0, 3.0, 3.0}, 3, 10, cal, pri);
  for (std::size_t l = 0; l < 3; ++l) EXPECT_NEAR(tie[l], 0.8 / 3.0 + 0.2 * pri[l], 1e-12);
  EXPECT_GT(tie[0], tie[1]);
  // Laplace-smoothed priors.
  const auto pr = class_priors(std::vector<std::uint64_t>{3, 0, 1});
  EXPECT_NEAR(pr[0], 4.0 / 7.0, 1e-12);
  EXPECT_NEAR(pr[1], 1.0 / 7.0, 1e-12);
  EXPECT_EQ(class_priors(std::vector<std::uint32_t>{0, 0, 0, 2}, 3), pr);
  EXPECT_THROW(scores_to_probabilities(s, 3, 10, Calibration{0.0, 0.0, CalibrationSource::Given, 0}, pri), Error);
  EXPECT_THROW(scores_to_probabilities(s, 3, 10, Calibration{0.5, 1.0, CalibrationSource::Given, 0}, pri), Error);
  EXPECT_THROW(scores_to_probabilities(s, 3, 10, cal, {0.5, 0.5}), Error);
  EXPECT_THROW(scores_to_probabilities(s, 3, 10, cal, {0.5, 0.5, 0.0}), Error);
}

TEST(Calibration, TheFitOnHeldOutScoresTakesTheGridsLeastLoss) {
  const Dataset data = test::blobs(3, 60, 8, 3, 1.5);
  const auto folds = stratified_folds(data.labels, 3, 5, 0);
  FlyConfig c;
  c.input_dim = 8;
  c.m = 400;
  c.s = 3;
  c.rho = 16;
  c.gamma = 0.5;
  c.seed = 7;
  const FlyCvEvaluator ev(data, folds, 5);
  const auto scores = ev.out_of_fold_scores(c, 1);
  const auto pri = class_priors(data.labels, 3);
  const CalibrationFit fit = fit_calibration(scores, 3, c.rho, data.labels);
  auto loss = [&](const Calibration& k) {
    return log_loss(scores_to_probabilities(scores, 3, c.rho, k, pri), 3, data.labels);
  };
  EXPECT_NEAR(fit.log_loss, loss(fit.calibration), 1e-9);
  // No candidate of prior weight 0 (always allowed) has a smaller loss (to the fixed-point
  // sums' rounding).
  for (const Calibration& k : calibration_grid())
    if (k.prior_weight == 0.0) {
      EXPECT_LE(fit.log_loss, loss(k) + 1e-6) << k.temperature;
    }
  EXPECT_LT(fit.log_loss, loss(Calibration{1.0, 0.0, CalibrationSource::Given, 0}));  // softmax(−score/ρ): too flat
  EXPECT_EQ(fit.calibration.rows, data.n_rows);
}

TEST(Calibration, CrossFittedTemperatureLowersHeldOutLogLoss) {
  // On folds the temperature never saw, the fitted t beats the historical t = 1 (ρ-scaled
  // softmax): calibration generalises rather than memorising the scores.
  const Dataset data = test::blobs(4, 80, 10, 11, 2.0);
  const auto folds = stratified_folds(data.labels, 4, 5, 1);
  FlyConfig c;
  c.input_dim = 10;
  c.m = 500;
  c.s = 4;
  c.rho = 20;
  c.gamma = 0.3;
  c.seed = 3;
  const FlyCvEvaluator ev(data, folds, 5);
  const auto scores = ev.out_of_fold_scores(c, 1);
  const CalibrationReport rep = calibrate_out_of_fold(scores, 4, c.rho, data.labels, folds, 5);
  const auto pri = class_priors(data.labels, 4);
  const double at_one =
      log_loss(scores_to_probabilities(scores, 4, c.rho, Calibration{1.0, 0.0, CalibrationSource::Given, 0}, pri), 4,
               data.labels);
  EXPECT_LT(rep.heldout_log_loss, at_one);
  EXPECT_GE(rep.heldout_log_loss, rep.fit.log_loss - 1e-12);  // held out cannot beat in-sample
  EXPECT_LT(rep.heldout_ece, 0.1);
}

TEST(FlyCvScores, OutOfFoldScoresGiveTheEvaluatorsAccuracy) {
  const Dataset data = test::blobs(3, 40, 6, 5, 1.2);
  const auto folds = stratified_folds(data.labels, 3, 4, 2);
  FlyConfig c;
  c.input_dim = 6;
  c.m = 300;
  c.s = 2;
  c.rho = 12;
  c.gamma = 0.4;
  c.seed = 9;
  const FlyCvEvaluator ev(data, folds, 4);
  const auto scores = ev.out_of_fold_scores(c, 2);
  std::vector<std::size_t> correct(4, 0), total(4, 0);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    correct[folds[r]] += argmin_class(scores.data() + r * 3, 3) == data.labels[r];
    ++total[folds[r]];
  }
  const CvResult cv = ev.evaluate(c, {c.gamma}, 1)[0];
  for (std::uint32_t f = 0; f < 4; ++f)
    EXPECT_DOUBLE_EQ(cv.fold_accuracy[f], static_cast<double>(correct[f]) / total[f]) << f;
  EXPECT_EQ(ev.out_of_fold_scores(c, 1), scores);  // thread-count independent
}

TEST(FlyCvScores, StandardisingVariantsScoreEachFoldWithItsOwnStatistics) {
  const Dataset data = test::blobs(3, 40, 6, 5, 1.2);
  const auto folds = stratified_folds(data.labels, 3, 4, 2);
  FlyConfig c;
  c.input_dim = 6;
  c.m = 300;
  c.s = 2;
  c.rho = 12;
  c.gamma = 0.4;
  c.seed = 9;
  c.variant = parse_variant("zsign");
  const FlyCvEvaluator ev(data, folds, 4);
  const auto scores = ev.out_of_fold_scores(c, 1);
  std::vector<std::size_t> correct(4, 0), total(4, 0);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    correct[folds[r]] += argmin_class(scores.data() + r * 3, 3) == data.labels[r];
    ++total[folds[r]];
  }
  const CvResult cv = ev.evaluate(c, {c.gamma}, 1)[0];
  for (std::uint32_t f = 0; f < 4; ++f)
    EXPECT_DOUBLE_EQ(cv.fold_accuracy[f], static_cast<double>(correct[f]) / total[f]) << f;
}

TEST(Tune, TheVariantIsOneMoreSearchDimension) {
  SearchSpace sp;
  EXPECT_EQ(search_dimensions(sp), 4u);  // the paper's space: reproduce's points unchanged
  sp.variants = tune_variants();
  ASSERT_EQ(search_dimensions(sp), 5u);
  const std::size_t V = sp.variants.size();
  for (std::size_t i = 0; i < V; ++i) {
    const double u4 = (static_cast<double>(i) + 0.5) / static_cast<double>(V);
    const FlyConfig c = search_point_config(sp, {0.3, 0.3, 0.3, 0.9, u4}, 20, 5);
    EXPECT_EQ(c.variant, sp.variants[i]) << i;
    // Densify is the paper's alone.
    EXPECT_EQ(c.preprocess, c.variant.is_paper() ? Preprocess::Densify : Preprocess::Normalize);
    c.validate(3);
  }
  EXPECT_THROW(search_point_config(sp, {0.3, 0.3, 0.3, 0.9}, 20, 5), Error);  // 4 coordinates
  // A search over variants evaluates more than one of them and is deterministic.
  const Dataset data = test::blobs(3, 30, 6, 4, 1.0);
  const auto folds = stratified_folds(data.labels, 3, 3, 0);
  TuneOptions o;
  o.search.design = SearchDesign::Halton;
  o.search.budget = 8;
  o.search.threads = 1;
  o.search.space.variants = tune_variants();
  o.search.space.max_expansion = 16;
  const TuneResult a = tune_flynn(data, folds, 3, o), b = tune_flynn(data, folds, 3, o);
  std::set<std::string> seen;
  for (const auto& e : a.search.trace) seen.insert(variant_name(e.config.variant));
  EXPECT_GE(seen.size(), 3u);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.cv.fold_accuracy, b.cv.fold_accuracy);
}

// A Halton search of `budget` points over a tiny space (m ≤ 16d, γ ∈ {0, 0.5}), one thread.
TuneOptions tiny_space(std::uint32_t budget) {
  TuneOptions o;
  o.search.design = SearchDesign::Halton;
  o.search.budget = budget;
  o.search.threads = 1;
  o.search.space.max_expansion = 16;
  o.search.space.gammas = {0.0, 0.5};
  return o;
}

TEST(Tune, PicksTheBestOfATinySpaceDeterministically) {
  const Dataset data = test::blobs(3, 30, 6, 4, 1.0);
  const auto folds = stratified_folds(data.labels, 3, 3, 0);
  TuneOptions o = tiny_space(5);
  const TuneResult a = tune_flynn(data, folds, 3, o);
  ASSERT_EQ(a.search.trace.size(), 5u);
  // The chosen configuration is the best of the evaluated ones (first on ties) …
  double best = -1;
  std::size_t arg = 0;
  for (std::size_t i = 0; i < a.search.trace.size(); ++i)
    if (a.search.trace[i].accuracy > best) best = a.search.trace[arg = i].accuracy;
  EXPECT_EQ(a.config, a.search.trace[arg].config);
  EXPECT_DOUBLE_EQ(a.cv.mean, best);
  // … and the same on a second run with other thread counts.
  o.search.threads = 2;
  const TuneResult b = tune_flynn(data, folds, 3, o);
  EXPECT_EQ(b.config, a.config);
  EXPECT_EQ(b.cv.fold_accuracy, a.cv.fold_accuracy);
  ASSERT_TRUE(a.calibration && b.calibration);
  EXPECT_EQ(a.calibration->fit.calibration, b.calibration->fit.calibration);
  // The saved model's predictions agree with the configuration's CV (trained on all rows).
  const FlyNN model = train_tuned_model(data, data.classes, a, 1);
  EXPECT_EQ(model.config(), a.config);
}

// keep_default_unless_beaten: the defaults' configuration (anchor units here, d = 6, which
// the search's space does not hold) is evaluated on the same folds and kept unless the
// search's best scores higher, so tuning never returns less than `train` with no flags.
TEST(Tune, KeepsTheDefaultsOwnConfigurationUnlessBeaten) {
  const Dataset data = test::blobs(4, 45, 6, 23, 1.2);
  const auto folds = stratified_folds(data.labels, 4, 3, 0);
  TuneOptions o = tiny_space(3);
  const TuneResult plain = tune_flynn(data, folds, 3, o);
  EXPECT_FALSE(plain.default_candidate);
  EXPECT_FALSE(plain.kept_default);
  EXPECT_EQ(plain.config, plain.search.best_config);

  o.keep_default_unless_beaten = true;
  const FlyConfig rule = default_rule_config(o.search, 6, 4);
  EXPECT_EQ(rule, HyperParams{}.resolve(6, 4));
  EXPECT_TRUE(rule.variant.anchors);
  const TuneResult r = tune_flynn(data, folds, 3, o);
  ASSERT_TRUE(r.default_candidate);
  EXPECT_EQ(r.default_candidate->config, rule);
  const CvResult& default_cv = r.default_candidate->cv;
  EXPECT_EQ(r.search.best_config, plain.search.best_config);  // the search itself is unchanged
  const FlyCvEvaluator ev(data, folds, 3);
  EXPECT_EQ(default_cv.fold_accuracy, ev.evaluate(rule, {rule.gamma}, 1).front().fold_accuracy);
  EXPECT_GE(r.cv.mean, default_cv.mean);
  EXPECT_GE(r.cv.mean, r.search.best_cv.mean);
  EXPECT_EQ(r.kept_default, default_cv.mean >= r.search.best_cv.mean);
  EXPECT_EQ(r.config, r.kept_default ? rule : r.search.best_config);
  // Here the tiny space (m ≤ 16d) loses to the defaults: the model is train's.
  EXPECT_TRUE(r.kept_default);
  EXPECT_EQ(train_tuned_model(data, data.classes, r, 1).config(), rule);
  // With a class weight and another metric the candidate carries the search's weight, and
  // the choice is judged by that metric.
  o.search.class_weight = ClassWeight::parse("balanced");
  o.search.metric = CvMetric::BalancedAccuracy;
  const TuneResult w = tune_flynn(data, folds, 3, o);
  ASSERT_TRUE(w.default_candidate);
  EXPECT_EQ(default_rule_config(o.search, 6, 4).class_weight.text(), "balanced");
  EXPECT_GE(w.cv.balanced_accuracy, w.default_candidate->cv.balanced_accuracy);
  EXPECT_GE(w.cv.balanced_accuracy, w.search.best_cv.balanced_accuracy);
}

// try_pairs: the configuration chosen before (here the search's or the defaults') is
// cross-validated with second-order filters on the same folds and taken only when it scores
// strictly higher.
TEST(Tune, TriesTheChosenConfigurationWithPairs) {
  const Dataset data = test::blobs(5, 40, 12, 29, 1.6);
  const auto folds = stratified_folds(data.labels, 5, 3, 0);
  TuneOptions o = tiny_space(3);
  o.keep_default_unless_beaten = true;
  const TuneResult before = tune_flynn(data, folds, 3, o);
  EXPECT_FALSE(before.pairs.candidate);
  o.try_pairs = true;
  const TuneResult r = tune_flynn(data, folds, 3, o);
  ASSERT_TRUE(r.pairs.candidate);
  FlyConfig with_pairs = before.config;
  with_pairs.pairs = Defaults::tune_pairs;
  EXPECT_EQ(r.pairs.candidate->config, with_pairs);
  const FlyCvEvaluator ev(data, folds, 3);
  EXPECT_EQ(r.pairs.candidate->cv.fold_accuracy, ev.evaluate(with_pairs, {with_pairs.gamma}, 1).front().fold_accuracy);
  EXPECT_EQ(r.pairs.taken, r.pairs.candidate->cv.mean > before.cv.mean);
  EXPECT_EQ(r.config, r.pairs.taken ? with_pairs : before.config);
  EXPECT_GE(r.cv.mean, before.cv.mean);
  // The model trained on the choice has the pairs it was judged with.
  EXPECT_EQ(train_tuned_model(data, data.classes, r, 1).config().pairs, r.pairs.taken ? Defaults::tune_pairs : 0u);
}

// try_value_transform: tried before pairs, on a standardising choice only, taken only when
// strictly better; pairs then extend whatever was chosen.
TEST(Tune, TriesTheChosenConfigurationWithTransformedValuesBeforePairs) {
  Dataset data = test::blobs(4, 40, 10, 31, 1.4);
  for (float& v : data.features) v = std::exp(v);  // skewed, positive: log1p undoes most of it
  const auto folds = stratified_folds(data.labels, 4, 3, 0);
  TuneOptions o = tiny_space(3);
  o.keep_default_unless_beaten = true;
  const TuneResult before = tune_flynn(data, folds, 3, o);
  EXPECT_FALSE(before.transform.candidate);
  o.try_value_transform = true;
  o.try_pairs = true;
  const TuneResult r = tune_flynn(data, folds, 3, o);
  const FlyCvEvaluator ev(data, folds, 3);
  ASSERT_TRUE(before.config.variant.standardize);  // the defaults' anchor units (d = 10)
  ASSERT_TRUE(r.transform.candidate);
  FlyConfig transformed = before.config;
  transformed.value_transform = Defaults::tune_value_transform;
  EXPECT_EQ(r.transform.candidate->config, transformed);
  EXPECT_EQ(r.transform.candidate->cv.fold_accuracy,
            ev.evaluate(transformed, {transformed.gamma}, 1).front().fold_accuracy);
  EXPECT_EQ(r.transform.taken, r.transform.candidate->cv.mean > before.cv.mean);
  EXPECT_EQ(r.transform.metric_before, before.cv.mean);
  // A configuration that reads raw rows is not tried.
  o.search.space.variants = {parse_variant("paper")};
  o.keep_default_unless_beaten = false;
  EXPECT_FALSE(tune_flynn(data, folds, 3, o).transform.candidate);
  // Pairs extend the configuration chosen after the transform's trial.
  ASSERT_TRUE(r.pairs.candidate);
  const FlyConfig base = r.transform.taken ? r.transform.candidate->config : before.config;
  FlyConfig with_pairs = base;
  with_pairs.pairs = Defaults::tune_pairs;
  EXPECT_EQ(r.pairs.candidate->config, with_pairs);
  EXPECT_EQ(r.config, r.pairs.taken ? with_pairs : base);
  EXPECT_GE(r.cv.mean, before.cv.mean);
  EXPECT_EQ(train_tuned_model(data, data.classes, r, 1).config(), r.config);
}

TEST(Tune, LogLossMetricIsTheCalibratedOutOfFoldLogLoss) {
  // The evaluator's log-loss (with_log_loss) is the temperature fitted on the out-of-fold
  // scores out_of_fold_scores gives, for the plain and the per-fold (standardising) path,
  // with and without class weights; and a search by log-loss picks the evaluation of lowest
  // log-loss, whose temperature the calibration then finds again.
  const Dataset data = test::blobs(3, 40, 6, 12, 2.5);
  const std::uint32_t k = 4;
  const auto folds = stratified_folds(data.labels, 3, k, 1);
  const FlyCvEvaluator ev(data, folds, k);
  for (const char* variant : {"paper", "zsign"})
    for (const char* cw : {"none", "balanced"}) {
      SCOPED_TRACE(std::string(variant) + " " + cw);
      FlyConfig c;
      c.input_dim = 6;
      c.m = 120;
      c.s = 3;
      c.rho = 8;
      c.seed = 3;
      c.variant = parse_variant(variant);
      c.class_weight = ClassWeight::parse(cw);
      const std::vector<double> gammas = {0.0, 0.6};
      const auto with = ev.evaluate(c, gammas, 2, {}, true);
      const auto without = ev.evaluate(c, gammas, 1);
      for (std::size_t g = 0; g < gammas.size(); ++g) {
        EXPECT_EQ(with[g].fold_accuracy, without[g].fold_accuracy);  // the rest is unchanged
        EXPECT_TRUE(std::isnan(without[g].log_loss));
        c.gamma = gammas[g];
        const OutOfFoldLogLoss direct =
            out_of_fold_log_loss(ev.out_of_fold_scores(c, 1), 3, c.rho, data.labels, folds, k,
                                 class_weights_of_rows(c, data.classes, data.labels));
        EXPECT_EQ(with[g].fold_log_loss, direct.fold_log_loss);
        EXPECT_DOUBLE_EQ(with[g].log_loss, direct.log_loss);
        EXPECT_EQ(with[g].calibration, direct.calibration);
        EXPECT_DOUBLE_EQ(with[g].metric(CvMetric::LogLoss), -direct.log_loss);
        EXPECT_GT(direct.log_loss, 0.0);
        EXPECT_LT(direct.log_loss, std::log(3.0));  // better than the uniform guess
      }
    }
  EXPECT_EQ(parse_cv_metric("log_loss"), CvMetric::LogLoss);
  EXPECT_STREQ(cv_metric_name(CvMetric::LogLoss), "log_loss");

  TuneOptions o = tiny_space(6);
  o.search.metric = CvMetric::LogLoss;
  const TuneResult r = tune_flynn(data, folds, k, o);
  double lowest = std::numeric_limits<double>::infinity();
  for (const SearchEvaluation& e : r.search.trace) {
    EXPECT_LT(e.accuracy, 0.0);  // minus a log-loss
    lowest = std::min(lowest, -e.accuracy);
  }
  EXPECT_DOUBLE_EQ(r.cv.log_loss, lowest);
  ASSERT_TRUE(r.calibration);
  EXPECT_EQ(r.calibration->fit.calibration, r.cv.calibration);
  // Judged by log-loss, the choice is at least as good as the accuracy search's choice.
  o.search.metric = CvMetric::Accuracy;
  const TuneResult by_accuracy = tune_flynn(data, folds, k, o);
  ASSERT_TRUE(by_accuracy.calibration);
  EXPECT_LE(r.calibration->fit.log_loss, by_accuracy.calibration->fit.log_loss + 1e-12);
}

TEST(Tune, TimeLimitStopsTheSearchButKeepsOneFullEvaluation) {
  const Dataset data = test::blobs(2, 200, 6, 8, 1.2);  // 400 rows
  const auto folds = stratified_folds(data.labels, 2, 3, 0);
  SearchOptions o;
  o.design = SearchDesign::HaltonHalving;
  o.budget = 30;
  o.threads = 1;
  o.halving_min_rows = 40;
  o.space.max_expansion = 32;
  const SearchResult full = search_flynn(data, folds, 3, o);
  EXPECT_FALSE(full.time_limited);
  o.time_limit_seconds = 1e-9;  // already over when the first evaluation would start
  const SearchResult cut = search_flynn(data, folds, 3, o);
  EXPECT_TRUE(cut.time_limited);
  EXPECT_EQ(cut.full_evaluations, 1u);
  EXPECT_EQ(cut.trace.size(), 2u);  // one subsample evaluation, then the full-data one
  EXPECT_EQ(cut.trace.back().rows, data.n_rows);
  EXPECT_EQ(cut.best_config, cut.trace.back().config);
  EXPECT_LT(cut.trace.size(), full.trace.size());
}

}  // namespace
}  // namespace flynn::eval
