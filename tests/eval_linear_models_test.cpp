// One-epoch LR and MLP: standardisation from the training rows, learning on separable data,
// exactly one pass, determinism, and a diverged model that still predicts.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "flynn/error.hpp"
#include "flynn/baselines/linear_models.hpp"
#include "test_support.hpp"

namespace flynn::baselines {
namespace {

TEST(EvalLinearModels, StandardizerUsesOnlyTheGivenRows) {
  const Dataset d = test::make_dataset({{1, 5}, {3, 5}, {100, 7}}, {"a", "b", "a"});
  const Standardizer s(d, {0, 1});
  EXPECT_DOUBLE_EQ(s.mean()[0], 2.0);
  EXPECT_DOUBLE_EQ(s.scale()[0], 1.0);  // population sd of {1, 3}
  EXPECT_DOUBLE_EQ(s.scale()[1], 1.0);  // constant column: scale 1, values centred to 0
  const auto x = s.transform(d, {0, 1, 2});
  EXPECT_FLOAT_EQ(x[0], -1.0f);
  EXPECT_FLOAT_EQ(x[2], 1.0f);
  EXPECT_FLOAT_EQ(x[1], 0.0f);
  EXPECT_FLOAT_EQ(x[4], 98.0f);  // row 2 did not shape the statistics
  EXPECT_FLOAT_EQ(x[5], 2.0f);
}

TEST(EvalLinearModels, OneEpochLearnsSeparableBlobs) {
  const Dataset data = test::blobs(4, 100, 8, 3, 0.3);
  const auto folds = eval::stratified_folds(data.labels, 4, 5, 0);
  for (bool mlp : {false, true}) {
    const SgdCvResult r = cross_validate_one_epoch(data, folds, 5, mlp, {}, {0.01, 0.1});
    ASSERT_EQ(r.per_rate.size(), 2u);
    EXPECT_GT(r.per_rate[r.best].mean, 0.95) << (mlp ? "MLP" : "LR");
    // Same seed, same result.
    const SgdCvResult again = cross_validate_one_epoch(data, folds, 5, mlp, {}, {0.01, 0.1});
    EXPECT_EQ(r.per_rate[0].fold_accuracy, again.per_rate[0].fold_accuracy);
  }
}

TEST(EvalLinearModels, ExactlyOneEpochAndZeroInitialLogisticWeights) {
  // With a learning rate of 0 the LR model stays at its zero initialisation: all logits
  // equal, so the lowest class wins everywhere.
  const Dataset data = test::blobs(3, 30, 4, 8, 0.3);
  const Standardizer st(data, {});
  std::vector<std::size_t> all(data.n_rows);
  std::iota(all.begin(), all.end(), 0);
  const auto x = st.transform(data, all);
  OneEpochNet lr(4, 3, 0, 0, kLogisticStreamTag);
  lr.train_epoch(x.data(), data.labels.data(), data.n_rows, 0.0, 32);
  for (auto p : lr.predict(x.data(), data.n_rows)) EXPECT_EQ(p, 0u);
  // One epoch with one full batch is exactly one gradient step from zero: with uniform
  // initial probabilities 1/L, w_l = −η·mean_r (1/L − [y_r = l]) x_r and likewise b_l.
  const double eta = 0.7;
  OneEpochNet full(4, 3, 0, 0, kLogisticStreamTag);
  full.train_epoch(x.data(), data.labels.data(), data.n_rows, eta, static_cast<std::uint32_t>(data.n_rows));
  std::vector<double> w(3 * 4, 0.0), bias(3, 0.0);
  for (std::size_t r = 0; r < data.n_rows; ++r)
    for (std::size_t l = 0; l < 3; ++l) {
      const double g = 1.0 / 3.0 - (data.labels[r] == l ? 1.0 : 0.0);
      bias[l] -= eta * g / data.n_rows;
      for (std::size_t j = 0; j < 4; ++j) w[l * 4 + j] -= eta * g * x[r * 4 + j] / data.n_rows;
    }
  const auto pred = full.predict(x.data(), data.n_rows);
  std::size_t agree = 0;
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    std::size_t best = 0;
    double top = -1e300;
    for (std::size_t l = 0; l < 3; ++l) {
      double a = bias[l];
      for (std::size_t j = 0; j < 4; ++j) a += w[l * 4 + j] * x[r * 4 + j];
      if (a > top) top = a, best = l;
    }
    agree += pred[r] == best;
  }
  EXPECT_EQ(agree, data.n_rows);
  OneEpochNet a(4, 3, 16, 1, kMlpStreamTag), b(4, 3, 16, 1, kMlpStreamTag);
  a.train_epoch(x.data(), data.labels.data(), data.n_rows, 0.05, 1);
  b.train_epoch(x.data(), data.labels.data(), data.n_rows, 0.05, 1);
  EXPECT_EQ(a.predict(x.data(), data.n_rows), b.predict(x.data(), data.n_rows));
  EXPECT_THROW(a.train_epoch(x.data(), data.labels.data(), data.n_rows, 0.1, 0), Error);
}

TEST(EvalLinearModels, DivergedModelPredictsClassZero) {
  const Dataset data = test::blobs(2, 20, 3, 4, 0.3);
  const auto folds = eval::stratified_folds(data.labels, 2, 2, 0);
  // A huge step overflows the weights to ±inf/NaN; the CV still returns accuracies.
  const SgdCvResult r = cross_validate_one_epoch(data, folds, 2, true, {}, {1e300});
  EXPECT_GE(r.per_rate[0].mean, 0.0);
  EXPECT_LE(r.per_rate[0].mean, 1.0);
  EXPECT_THROW(cross_validate_one_epoch(data, folds, 2, false, {}, {-1.0}), Error);
  EXPECT_THROW(cross_validate_one_epoch(data, folds, 2, false, {}, {}), Error);
}

}  // namespace
}  // namespace flynn::baselines
