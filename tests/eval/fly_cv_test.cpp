// The search's FlyNN CV evaluator (one count table, subtract-score-add per fold) gives
// exactly the accuracies of cross_validate_flynn_gammas (k+1 count tables, filter tables).
#include <gtest/gtest.h>

#include "flynn/error.hpp"
#include "flynn/classifier.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "test_support.hpp"

namespace flynn::eval {
namespace {

FlyConfig config(std::uint32_t d, std::uint32_t m, std::uint32_t s, std::uint32_t rho, Preprocess p) {
  FlyConfig c;
  c.input_dim = d;
  c.m = m;
  c.s = s;
  c.rho = rho;
  c.gamma = 0.0;
  c.seed = 77;
  c.preprocess = p;
  return c;
}

TEST(EvalFlyCv, MatchesCrossValidateFlynnGammasExactly) {
  const Dataset data = test::blobs(4, 40, 9, 21, 1.5);
  const std::uint32_t k = 5;
  const auto folds = stratified_folds(data.labels, 4, k, 2);
  const FlyCvEvaluator ev(data, folds, k);
  const std::vector<double> gammas = {0.0, 0.1, 0.5, 0.8};
  FlyConfig relative = config(9, 400, 4, 40, Preprocess::Normalize);
  relative.filter_scoring = FilterScoring::Relative;
  FlyConfig pairs = relative;  // second-order filters take the per-fold path
  pairs.pairs = 3;
  FlyConfig absolute_pairs = config(9, 60, 3, 6, Preprocess::Normalize);
  absolute_pairs.pairs = 2;
  for (const FlyConfig& c : {config(9, 60, 3, 6, Preprocess::Normalize), config(9, 400, 4, 20, Preprocess::Densify),
                             config(9, 30, 2, 10, Preprocess::None), relative, pairs, absolute_pairs}) {
    const auto ours = ev.evaluate(c, gammas, 2);
    const auto ref = cross_validate_flynn_gammas(data, c, gammas, folds, k, 1);
    ASSERT_EQ(ours.size(), gammas.size());
    for (std::size_t g = 0; g < gammas.size(); ++g)
      EXPECT_EQ(ours[g].fold_accuracy, ref[g].fold_accuracy) << c.describe() << " gamma " << gammas[g];
  }
  // Thread count does not matter.
  const FlyConfig c = config(9, 200, 3, 8, Preprocess::Normalize);
  EXPECT_EQ(ev.evaluate(c, gammas, 1)[2].fold_accuracy, ev.evaluate(c, gammas, 3)[2].fold_accuracy);
}

TEST(EvalFlyCv, ClassWeightsAndEveryMetricMatchTheReferenceAndFoldModels) {
  // Imbalanced classes (80 / 24 / 12 rows) with balanced and given weights: the evaluator
  // equals the reference formulation, and both equal FlyNN models trained on each fold's
  // training rows (whose weights follow their own counts).
  const Dataset all = test::blobs(3, 80, 7, 31, 1.8);
  std::vector<std::size_t> keep;
  std::size_t seen[3] = {0, 0, 0};
  const std::size_t cap[3] = {80, 24, 12};
  for (std::size_t r = 0; r < all.n_rows; ++r)
    if (seen[all.labels[r]]++ < cap[all.labels[r]]) keep.push_back(r);
  const Dataset data = all.subset(keep);
  const std::uint32_t k = 4;
  const auto folds = stratified_folds(data.labels, 3, k, 5);
  const FlyCvEvaluator ev(data, folds, k);
  const std::vector<double> gammas = {0.0, 0.5, 0.8};
  // For each fold: a FlyNN of `c` trained on the other folds, and visit(its model, the fold's rows).
  const auto fold_models = [&](const FlyConfig& c, const auto& visit) {
    for (std::uint32_t f = 0; f < k; ++f) {
      std::vector<std::size_t> train, test;
      for (std::size_t r = 0; r < data.n_rows; ++r) (folds[r] == f ? test : train).push_back(r);
      FlyNN model(c, data.classes, 1);
      model.fit(data.subset(train));
      // Cross-validation measures the score order's decisions: prior weight 0.
      model.set_calibration(Calibration{});
      visit(model, test);
    }
  };
  // Both scorings: Relative's per-class factors come from each fold's counts.
  // Second-order filters (pairs = 3) too: two blocks, each with its own γ and factors.
  for (const std::uint32_t pairs : {0u, 3u})
  for (const FilterScoring scoring : {FilterScoring::Absolute, FilterScoring::Relative})
  for (const char* cw : {"none", "balanced", "c2=3.5"}) {
    SCOPED_TRACE(std::string(filter_scoring_name(scoring)) + " pairs " + std::to_string(pairs));
    FlyConfig c = config(7, 300, 3, 12, Preprocess::Normalize);
    c.class_weight = ClassWeight::parse(cw);
    c.filter_scoring = scoring;
    c.pairs = pairs;
    const auto ours = ev.evaluate(c, gammas, 2);
    const auto ref = cross_validate_flynn_gammas(data, c, gammas, folds, k, 1);
    for (std::size_t g = 0; g < gammas.size(); ++g) {
      SCOPED_TRACE(std::string(cw) + " gamma " + std::to_string(gammas[g]));
      EXPECT_EQ(ours[g].fold_accuracy, ref[g].fold_accuracy);
      EXPECT_EQ(ours[g].fold_balanced_accuracy, ref[g].fold_balanced_accuracy);
      EXPECT_EQ(ours[g].fold_macro_f1, ref[g].fold_macro_f1);
      // Fold models.
      c.gamma = gammas[g];
      std::vector<std::uint32_t> predicted(data.n_rows);
      fold_models(c, [&](const FlyNN& model, const std::vector<std::size_t>& test) {
        const auto p = model.predict(data.subset(test));
        for (std::size_t i = 0; i < test.size(); ++i) predicted[test[i]] = p[i];
      });
      const CvResult direct = summarize_predictions(data.labels, predicted, folds, k, 3, 0.0);
      EXPECT_EQ(ours[g].fold_balanced_accuracy, direct.fold_balanced_accuracy);
      EXPECT_EQ(ours[g].fold_accuracy, direct.fold_accuracy);
      EXPECT_DOUBLE_EQ(ours[g].metric(CvMetric::MacroF1), direct.macro_f1);
    }
    // Out-of-fold scores too (a standardising variant takes the per-fold path).
    for (const char* variant : {"paper", "zsign", "zsign+log1p"}) {
      FlyConfig z = config(7, 300, 3, 12, Preprocess::Normalize);
      z.gamma = 0.5;
      const bool log1p = std::string(variant) == "zsign+log1p";  // per-fold sums of transformed values
      z.variant = parse_variant(log1p ? "zsign" : variant);
      if (log1p) z.value_transform = ValueTransform::Log1p;
      z.class_weight = ClassWeight::parse(cw);
      z.filter_scoring = scoring;
      z.pairs = pairs;
      const std::vector<double> oof = ev.out_of_fold_scores(z, 2);
      std::vector<double> direct(data.n_rows * 3);
      fold_models(z, [&](const FlyNN& model, const std::vector<std::size_t>& test) {
        const auto s = model.scores(data.subset(test));
        for (std::size_t i = 0; i < test.size(); ++i)
          for (std::size_t l = 0; l < 3; ++l) direct[test[i] * 3 + l] = s[i * 3 + l];
      });
      EXPECT_EQ(oof, direct) << cw << " " << variant;
    }
  }
}

TEST(EvalFlyCv, MetricsOfKnownPredictions) {
  // Two folds; fold 0 all right; fold 1 predicts only class 0.
  const std::vector<std::uint32_t> truth = {0, 1, 0, 1, 0, 0, 0, 1};
  const std::vector<std::uint32_t> pred = {0, 1, 0, 1, 0, 0, 0, 0};
  const std::vector<std::uint32_t> folds = {0, 0, 0, 0, 1, 1, 1, 1};
  const CvResult r = summarize_predictions(truth, pred, folds, 2, 2, 0.0);
  EXPECT_EQ(r.fold_accuracy, (std::vector<double>{1.0, 0.75}));
  EXPECT_EQ(r.fold_balanced_accuracy, (std::vector<double>{1.0, 0.5}));
  // Fold 1: F1 of class 0 = 2·3/(3+4) = 6/7, class 1 = 0.
  EXPECT_DOUBLE_EQ(r.fold_macro_f1[1], 3.0 / 7.0);
  EXPECT_DOUBLE_EQ(r.metric(CvMetric::BalancedAccuracy), 0.75);
  EXPECT_EQ(parse_cv_metric("macro_f1"), CvMetric::MacroF1);
  EXPECT_THROW(parse_cv_metric("auc"), Error);
}

TEST(EvalFlyCv, ResourceEstimatesAndErrors) {
  const FlyConfig c = config(10, 1000, 5, 32, Preprocess::Normalize);
  EXPECT_DOUBLE_EQ(fly_cv_work(c, 100), 100.0 * 1000 * 5);
  EXPECT_EQ(fly_cv_memory_bytes(c, 100, 3), 1000u * 5 * 4 + 3u * 1000 * 4 + 100u * 32 * 4 + (1u << 20));
  const Dataset data = test::blobs(2, 10, 10, 1);
  EXPECT_THROW(FlyCvEvaluator(data, {0, 1}, 2), Error);
  const FlyCvEvaluator ev(data, stratified_folds(data.labels, 2, 2, 0), 2);
  EXPECT_THROW(ev.evaluate(c, {}), Error);
  EXPECT_THROW(ev.evaluate(c, {1.0}), Error);
}

}  // namespace
}  // namespace flynn::eval
