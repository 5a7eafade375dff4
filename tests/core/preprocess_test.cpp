// Row preprocessing: L2 normalisation and the randomised Hadamard transform.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "flynn/preprocess.hpp"

namespace flynn {
namespace {

double norm(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s);
}

TEST(Preprocessor, NormalizeGivesUnitRowsAndKeepsZeroRows) {
  const Preprocessor p(Preprocess::Normalize, 3, 1);
  std::vector<float> out(3);
  const std::vector<float> x = {3, 0, 4};
  p.apply(x.data(), out.data());
  EXPECT_FLOAT_EQ(out[0], 0.6f);
  EXPECT_FLOAT_EQ(out[2], 0.8f);
  const std::vector<float> zero = {0, 0, 0};
  p.apply(zero.data(), out.data());
  EXPECT_EQ(out, zero);
}

TEST(Preprocessor, NoneCopies) {
  const Preprocessor p(Preprocess::None, 2, 1);
  std::vector<float> out(2);
  const std::vector<float> x = {-1.5f, 7};
  p.apply(x.data(), out.data());
  EXPECT_EQ(out, x);
}

TEST(Preprocessor, DensifyPadsAndPreservesNorm) {
  const Preprocessor p(Preprocess::Densify, 5, 42);
  EXPECT_EQ(p.output_dim(), 8u);
  std::vector<float> out(8);
  const std::vector<float> x = {1, 0, 0, 0, 0};
  p.apply(x.data(), out.data());
  // A single spike spreads evenly: every output is ±1/√8.
  for (float v : out) EXPECT_NEAR(std::fabs(v), 1.0 / std::sqrt(8.0), 1e-6);
  const std::vector<float> y = {1, -2, 3, 0.5f, 4};
  std::vector<float> out2(8);
  p.apply(y.data(), out2.data());
  EXPECT_NEAR(norm(out2), 1.0, 1e-6);  // normalised, and H/√d' is orthogonal
}

TEST(Preprocessor, DensifySignsDependOnSeedOnly) {
  const std::vector<float> y = {1, -2, 3, 0.5f, 4};
  std::vector<float> a(8), b(8), c(8);
  Preprocessor(Preprocess::Densify, 5, 1).apply(y.data(), a.data());
  Preprocessor(Preprocess::Densify, 5, 1).apply(y.data(), b.data());
  Preprocessor(Preprocess::Densify, 5, 2).apply(y.data(), c.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(FastWalshHadamard, MatchesDefinition) {
  std::vector<double> v = {1, 2, 3, 4};
  fast_walsh_hadamard(v.data(), 4);
  EXPECT_EQ(v, (std::vector<double>{10, -2, -4, 0}));
}

TEST(Preprocessor, PowerOfTwoWidthIsNotPadded) {
  EXPECT_EQ(Preprocessor(Preprocess::Densify, 16, 1).output_dim(), 16u);
  EXPECT_EQ(Preprocessor(Preprocess::Densify, 1, 1).output_dim(), 1u);
}

}  // namespace
}  // namespace flynn
