// Planning inside a time limit (flynn/eval/time_budget.hpp): the work model, and
// tune_flynn leaving out its optional phases, never the mandatory ones, when the deadline
// leaves no room for them.
#include <gtest/gtest.h>

#include <chrono>

#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/eval/time_budget.hpp"
#include "flynn/eval/tune.hpp"
#include "test_support.hpp"

namespace flynn::eval {
namespace {

TEST(TimeBudget, WorkGrowsWithTheCostOfAnEvaluation) {
  HyperParams h;
  h.variant = parse_variant("paper");
  const FlyConfig paper = h.resolve(10, 3);
  h.variant = parse_variant("zsign");
  const FlyConfig zsign = h.resolve(10, 3);
  ASSERT_TRUE(FlyCvEvaluator::per_fold(zsign));
  ASSERT_FALSE(FlyCvEvaluator::per_fold(paper));
  // Twice the rows, twice the work; more γ values, more scoring; the per-fold path hashes
  // every row once per fold.
  EXPECT_DOUBLE_EQ(cv_evaluation_work(paper, 200, 3, 5, 1),
                   2 * cv_evaluation_work(paper, 100, 3, 5, 1));
  EXPECT_GT(cv_evaluation_work(paper, 100, 3, 5, 9), cv_evaluation_work(paper, 100, 3, 5, 1));
  FlyConfig same = zsign;
  same.variant = paper.variant;
  EXPECT_GT(cv_evaluation_work(zsign, 100, 3, 5, 1), cv_evaluation_work(same, 100, 3, 5, 1));
  EXPECT_LT(fit_work(paper, 100), cv_evaluation_work(paper, 100, 3, 5, 9));

  WorkRate rate;
  EXPECT_EQ(rate.seconds_for(1e9), 0.0);
  rate.add(1e9, 2.0);
  rate.add(4e9, 2.0);
  EXPECT_DOUBLE_EQ(rate.seconds_for(2e9), 4.0);  // the slowest rate seen

  EXPECT_FALSE(Deadline().set());
  EXPECT_TRUE(Deadline().fits(1e9));
  const Deadline d(std::chrono::steady_clock::now(), 100.0);
  EXPECT_TRUE(d.fits(50.0));
  EXPECT_FALSE(d.fits(200.0));
  EXPECT_FALSE(Deadline(std::chrono::steady_clock::now(), 0.0).set());
}

TEST(TimeBudget, TuneLeavesOutOptionalPhasesPastTheDeadline) {
  const Dataset data = test::blobs(3, 60, 6, 4, 1.0);
  const auto folds = stratified_folds(data.labels, 3, 3, 0);
  TuneOptions o;
  o.search.budget = 4;
  o.search.threads = 1;
  o.keep_default_unless_beaten = true;
  o.try_pairs = true;
  o.try_value_transform = true;
  const TuneResult free = tune_flynn(data, folds, 3, o);
  EXPECT_TRUE(free.skipped.empty());
  ASSERT_TRUE(free.calibration);
  ASSERT_TRUE(free.default_candidate);

  // A deadline that has passed: the search makes its one full-data evaluation, every
  // optional phase is left out and named; the kept out-of-fold scores are not optional.
  // (The data are too few for subsample rungs: the first candidate is on all rows.)
  o.deadline = Deadline(std::chrono::steady_clock::now() - std::chrono::seconds(1), 0.5);
  o.keep_out_of_fold_scores = true;
  const TuneResult cut = tune_flynn(data, folds, 3, o);
  EXPECT_TRUE(cut.search.time_limited);
  EXPECT_EQ(cut.search.full_evaluations, 1u);
  for (const std::string& phase : cut.skipped)
    EXPECT_TRUE(phase == "value_transform" || phase == "pairs") << phase;
  // The defaults' own configuration was the search's first candidate instead.
  EXPECT_FALSE(cut.default_candidate);
  const FlyConfig rule = default_rule_config(o.search, static_cast<std::uint32_t>(data.n_features), 3);
  FlyConfig first = cut.search.trace.front().config;
  first.gamma = rule.gamma;
  EXPECT_EQ(first.describe(), rule.describe());
  EXPECT_EQ(cut.out_of_fold_scores.size(), data.n_rows * 3);
  ASSERT_TRUE(cut.calibration);  // computed from the kept scores anyway
  // Without kept scores the calibration is optional too.
  o.keep_out_of_fold_scores = false;
  o.deadline = Deadline(std::chrono::steady_clock::now() - std::chrono::seconds(1), 0.5);
  const TuneResult bare = tune_flynn(data, folds, 3, o);
  EXPECT_EQ(bare.skipped.back(), "calibration");
  EXPECT_FALSE(bare.calibration);
}

}  // namespace
}  // namespace flynn::eval
