// SBFC: SimHash bits are signs of a Gaussian projection; filters are per-class ORs; the
// one-pass CV over the nested m grid equals a straightforward per-fold fit/predict.
#include <gtest/gtest.h>

#include <cmath>

#include "flynn/error.hpp"
#include "flynn/baselines/sbfc.hpp"
#include "flynn/random.hpp"
#include "test_support.hpp"

namespace flynn::baselines {
namespace {

TEST(EvalSbfc, BitsAreSignsOfTheSeededGaussianProjection) {
  const Dataset data = test::blobs(2, 20, 7, 5);
  const std::uint32_t m = 150;  // not a multiple of 64: exercises the partial last word
  const SimHashCodes codes = simhash(data, m, 42, 1);
  ASSERT_EQ(codes.words, 3u);
  std::size_t ones = 0, checked = 0;
  for (std::uint32_t i = 0; i < m; ++i) {
    SeededRng rng = SeededRng::keyed(42, RngStream::Baseline, kSbfcStreamTag | i);
    std::vector<double> w(7);
    for (double& v : w) v = static_cast<float>(rng.normal());
    for (std::size_t r = 0; r < data.n_rows; ++r) {
      double dot = 0;
      for (std::size_t j = 0; j < 7; ++j) dot += w[j] * data.row(r)[j];
      if (std::fabs(dot) < 1e-4) continue;  // float sgemm may round these either way
      EXPECT_EQ(codes.bit(r, i), dot > 0) << "row " << r << " unit " << i;
      ones += dot > 0;
      ++checked;
    }
  }
  EXPECT_GT(checked, 5000u);
  EXPECT_NEAR(double(ones) / checked, 0.5, 0.15);  // SimHash: about half the bits set
  // Unused bits of the last word stay 0.
  for (std::size_t r = 0; r < data.n_rows; ++r) EXPECT_EQ(codes.bits[r * 3 + 2] >> (150 - 128), 0u);
  // The first m' units do not depend on m (nested projections).
  const SimHashCodes longer = simhash(data, 300, 42, 2);
  for (std::size_t r = 0; r < data.n_rows; ++r)
    for (std::uint32_t i = 0; i < m; ++i) ASSERT_EQ(codes.bit(r, i), longer.bit(r, i));
}

TEST(EvalSbfc, FiltersAreClassOrsAndScoresCountMissedBits) {
  SimHashCodes c;
  c.n_rows = 4;
  c.m = 4;
  c.words = 1;
  c.bits = {0b0011, 0b0110, 0b1000, 0b1001};
  const std::vector<std::uint32_t> labels = {0, 0, 1, 1};
  const SbfcModel model(c, 4, labels, 2, {0, 1, 2});  // row 3 held out
  EXPECT_TRUE(model.filter_bit(0, 0) && model.filter_bit(0, 1) && model.filter_bit(0, 2));
  EXPECT_FALSE(model.filter_bit(0, 3));
  EXPECT_TRUE(model.filter_bit(1, 3));
  EXPECT_FALSE(model.filter_bit(1, 0));
  // Row 3 = bits {0, 3}: class 0's filter {0,1,2} misses bit 3 → 1; class 1's {3} misses 0 → 1.
  EXPECT_EQ(model.scores(c, 3), (std::vector<std::uint32_t>{1, 1}));
  EXPECT_EQ(model.predict(c, 3), 0u);  // tie → lowest class
  const SbfcModel first3(c, 3, labels, 2, {0, 1, 2});  // only units 0..2
  EXPECT_EQ(first3.scores(c, 3), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_THROW(SbfcModel(c, 5, labels, 2, {0}), Error);
}

TEST(EvalSbfc, OnePassCvEqualsPerFoldFitPredict) {
  const Dataset data = test::blobs(3, 30, 5, 9, 1.0);
  const std::uint32_t k = 5;
  const auto folds = eval::stratified_folds(data.labels, 3, k, 1);
  SbfcOptions o;
  o.expansion_factors = {0.2, 0.6, 1, 4, 16, 40, 100};  // m = 1, 3, 5, 20, 80, 200, 500
  o.seed = 17;
  o.threads = 1;
  const SbfcCvResult r = cross_validate_sbfc(data, folds, k, o);
  ASSERT_EQ(r.grid.size(), 7u);
  const SimHashCodes codes = simhash(data, 500, 17, 1);
  const auto parts = eval::fold_rows(folds, k);
  bool varies = false;
  for (const SbfcPoint& p : r.grid) {
    for (std::uint32_t f = 0; f < k; ++f) {
      const SbfcModel model(codes, p.m, data.labels, 3, parts[f].train);
      std::size_t correct = 0;
      for (std::size_t row : parts[f].test) correct += model.predict(codes, row) == data.labels[row];
      EXPECT_DOUBLE_EQ(p.cv.fold_accuracy[f], double(correct) / parts[f].test.size())
          << "m=" << p.m << " fold " << f;
    }
    varies = varies || p.cv.mean != r.grid[0].cv.mean;
  }
  EXPECT_TRUE(varies);
  EXPECT_EQ(r.grid[r.best].cv.mean,
            std::max_element(r.grid.begin(), r.grid.end(), [](const auto& a, const auto& b) {
              return a.cv.mean < b.cv.mean;
            })->cv.mean);
}

TEST(EvalSbfc, TimeGuardSkipsLargeGridPoints) {
  const Dataset data = test::blobs(2, 25, 4, 2);
  const auto folds = eval::stratified_folds(data.labels, 2, 5, 0);
  SbfcOptions o;
  o.max_work = 50.0 * 4 * 20;  // n·d·m ≤ max_work → m ≤ 20
  o.threads = 1;
  const SbfcCvResult r = cross_validate_sbfc(data, folds, 5, o);
  EXPECT_EQ(r.m_limit, 20u);
  for (const auto& p : r.grid) EXPECT_LE(p.m, 20u);
  EXPECT_FALSE(r.skipped_factors.empty());
  EXPECT_EQ(r.skipped_factors.back(), 2048.0);
  EXPECT_EQ(sbfc_units(0.05, 4), 1u);
  EXPECT_EQ(sbfc_units(2048, 10), 20480u);
}

}  // namespace
}  // namespace flynn::baselines
