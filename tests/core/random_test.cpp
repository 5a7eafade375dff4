// SeededRng: pinned output (the lifting matrix depends on it) and unbiased bounded draws.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "flynn/random.hpp"

namespace flynn {
namespace {

TEST(SeededRng, MatchesPublishedSplitMix64Vector) {
  // The reference SplitMix64 sequence for state 1234567 (also produced by
  // tests/golden/lifting_matrix_golden.py).
  SeededRng r(1234567);
  EXPECT_EQ(r.next_u64(), 6457827717110365317ULL);
  EXPECT_EQ(r.next_u64(), 3203168211198807973ULL);
  EXPECT_EQ(r.next_u64(), 9817491932198370423ULL);
}

TEST(SeededRng, KeyedStreamGolden) {
  SeededRng k = SeededRng::keyed(5489, RngStream::LiftingMatrix, 0);
  EXPECT_EQ(k.next_u64(), 8223432400201004047ULL);
  EXPECT_EQ(k.next_u64(), 3061396991586939053ULL);
}

TEST(SeededRng, BoundedGolden) {
  SeededRng b(42);
  const std::vector<std::uint64_t> expected = {7, 1, 2, 3, 0, 8, 2, 8};
  for (auto e : expected) EXPECT_EQ(b.uniform_below(10), e);
}

TEST(SeededRng, StreamsDiffer) {
  auto a = SeededRng::keyed(1, RngStream::LiftingMatrix, 0);
  auto b = SeededRng::keyed(1, RngStream::LiftingMatrix, 1);
  auto c = SeededRng::keyed(1, RngStream::Folds, 0);
  const auto x = a.next_u64(), y = b.next_u64(), z = c.next_u64();
  EXPECT_NE(x, y);
  EXPECT_NE(x, z);
  EXPECT_NE(y, z);
}

// Chi-square goodness of fit of uniform_below for a bound that does not divide 2^64.
TEST(SeededRng, UniformBelowIsUniform) {
  constexpr std::uint64_t kBound = 7;
  constexpr int kDraws = 700000;
  std::vector<int> hist(kBound, 0);
  SeededRng r(99);
  for (int i = 0; i < kDraws; ++i) ++hist[r.uniform_below(kBound)];
  double chi2 = 0.0;
  const double expected = double(kDraws) / kBound;
  for (int h : hist) chi2 += (h - expected) * (h - expected) / expected;
  // 6 degrees of freedom: P(chi2 > 22.46) = 0.001.
  EXPECT_LT(chi2, 22.46);
}

TEST(SeededRng, UniformBelowHugeBound) {
  SeededRng r(5);
  const std::uint64_t bound = (1ULL << 63) + 12345;
  for (int i = 0; i < 1000; ++i) EXPECT_LT(r.uniform_below(bound), bound);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(r.uniform_below(1), 0u);
}

TEST(SeededRng, Uniform01AndNormalMoments) {
  SeededRng r(11);
  double sum = 0, sum2 = 0, nsum = 0, nsum2 = 0;
  constexpr int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum2 += u * u;
    const double z = r.normal();
    nsum += z;
    nsum2 += z * z;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(sum2 / n - (sum / n) * (sum / n), 1.0 / 12, 0.002);
  EXPECT_NEAR(nsum / n, 0.0, 0.01);
  EXPECT_NEAR(nsum2 / n, 1.0, 0.015);
}

}  // namespace
}  // namespace flynn
