// The search's FlyNN CV evaluator (one count table, subtract-score-add per fold) gives
// exactly the accuracies of cross_validate_flynn_gammas (k+1 count tables, filter tables).
#include <gtest/gtest.h>

#include "flynn/error.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "test_support.hpp"

namespace flynn::experiments {
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
  for (const FlyConfig& c : {config(9, 60, 3, 6, Preprocess::Normalize), config(9, 400, 4, 20, Preprocess::Densify),
                             config(9, 30, 2, 10, Preprocess::None)}) {
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
}  // namespace flynn::experiments
