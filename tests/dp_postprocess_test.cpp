// Post-processing of a DP release (flynn/federated/dp_postprocess.hpp): what each mode does
// to an aggregated release, on hand-made sums whose answers are worked out here, its
// refusals, and its names. (The measured effect on accuracy is the privacy study's:
// docs/guide/federated.md.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/federated/dp_postprocess.hpp"

namespace flynn::federated {
namespace {

// Σ (1 − γ^c) of one class.
double familiarity(const std::vector<std::uint32_t>& c, std::size_t from, std::size_t m, double gamma) {
  double s = 0;
  for (std::size_t i = from; i < from + m; ++i) s += c[i] ? 1.0 - std::pow(gamma, c[i]) : 0.0;
  return s;
}

TEST(DpPostprocess, NoneKeepsTheRelease) {
  std::vector<std::uint32_t> c = {0, 5, 900, 3, 0, 1};
  const auto before = c;
  postprocess_release(c, 3, 2, Rational{40, 1}, 0.9, DpPostprocess::None);
  EXPECT_EQ(c, before);
}

TEST(DpPostprocess, ThresholdZeroesValuesWithinOneNoiseScale) {
  // b = 81/2 = 40.5: values below ⌈b⌉ = 41 are indistinguishable from zero plus noise.
  std::vector<std::uint32_t> c = {0, 40, 41, 900, 1, 12345};
  postprocess_release(c, 3, 2, Rational{81, 2}, 0.9, DpPostprocess::Threshold);
  EXPECT_EQ(c, (std::vector<std::uint32_t>{0, 0, 41, 900, 0, 12345}));
}

TEST(DpPostprocess, NoiseUnitsMakeTheFilterThePValueOfZero) {
  const double gamma = 0.9, b = 100;
  std::vector<std::uint32_t> c = {0, 1, 50, 100, 300, 1000};
  const auto v = c;
  postprocess_release(c, 6, 1, Rational{100, 1}, gamma, DpPostprocess::NoiseUnits);
  EXPECT_EQ(c[0], 0u);
  EXPECT_EQ(c[1], 0u);  // 1/(100·0.105) rounds to 0: a value far inside the noise is dropped
  for (std::size_t i = 2; i < c.size(); ++i) {
    // γ^v' = e^(−v/b) up to the rounding of v' (half a step of γ).
    EXPECT_NEAR(std::log(std::pow(gamma, c[i])), -double(v[i]) / b, 0.5 * std::log(1 / gamma) + 1e-12) << i;
    EXPECT_LT(c[i], v[i]);  // only ever shrinks
  }
  // Noise below the decay scale (b·ln(1/γ) ≤ 1): nothing changes; γ = 0 neither.
  std::vector<std::uint32_t> d = {0, 1, 50, 7};
  postprocess_release(d, 2, 2, Rational{1, 1}, 0.5, DpPostprocess::NoiseUnits);  // 1·ln 2 < 1
  EXPECT_EQ(d, (std::vector<std::uint32_t>{0, 1, 50, 7}));
  postprocess_release(d, 2, 2, Rational{1000, 1}, 0.0, DpPostprocess::NoiseUnits);
  EXPECT_EQ(d, (std::vector<std::uint32_t>{0, 1, 50, 7}));
}

TEST(DpPostprocess, ClassBalanceBringsEveryClassToTheSmallestFamiliarity) {
  const double gamma = 0.9;
  const std::size_t m = 6;
  // Class 0: three saturated entries; class 1: one; class 2: two mid-size ones; class 3:
  // nothing released (it stays empty and does not set the target).
  std::vector<std::uint32_t> c = {900, 0, 700, 0, 800, 0,   //
                                  0, 0, 0, 600, 0, 0,       //
                                  20, 0, 0, 0, 30, 0,       //
                                  0, 0, 0, 0, 0, 0};
  const auto before = c;
  const double target = familiarity(before, m, m, gamma);  // class 1's ≈ 1
  postprocess_release(c, m, 4, Rational{40, 1}, gamma, DpPostprocess::ClassBalance);
  // The smallest class is untouched, the empty one stays empty.
  EXPECT_EQ(std::vector<std::uint32_t>(c.begin() + m, c.begin() + 2 * m),
            std::vector<std::uint32_t>(before.begin() + m, before.begin() + 2 * m));
  EXPECT_EQ(std::vector<std::uint32_t>(c.begin() + 3 * m, c.end()), std::vector<std::uint32_t>(m, 0));
  for (std::size_t l : {0u, 2u}) {
    const double f = familiarity(c, l * m, m, gamma);
    EXPECT_LE(f, target + 1e-12) << l;
    // As close as integer counts allow: one more step of any entry would pass the target,
    // and a step changes an entry's familiarity by at most 1 − γ.
    EXPECT_GT(f, target - 3 * (1 - gamma)) << l;
    // Zeros stay zero, order within the class is kept.
    for (std::size_t i = 0; i < m; ++i) {
      if (before[l * m + i] == 0) {
        EXPECT_EQ(c[l * m + i], 0u);
      }
      for (std::size_t j = 0; j < m; ++j) {
        if (before[l * m + i] > before[l * m + j]) {
          EXPECT_GE(c[l * m + i], c[l * m + j]);
        }
      }
    }
  }
  // Binary filters (γ = 0): every class keeps as many non-zero entries as the smallest,
  // its largest ones.
  std::vector<std::uint32_t> b = {5, 9, 0, 7, 0, 0, 3, 0};
  postprocess_release(b, 4, 2, Rational{40, 1}, 0.0, DpPostprocess::ClassBalance);
  EXPECT_EQ(b, (std::vector<std::uint32_t>{0, 9, 0, 0, 0, 0, 3, 0}));
}

TEST(DpPostprocess, NoiseUnitsThenClassBalanceIsTheComposition) {
  const std::vector<std::uint32_t> release = {900, 0, 70, 0, 800, 0, 0, 0, 0, 600, 0, 0};
  const Rational b{100, 1};
  std::vector<std::uint32_t> both = release, step = release;
  postprocess_release(both, 6, 2, b, 0.9, DpPostprocess::NoiseUnitsClassBalance);
  postprocess_release(step, 6, 2, b, 0.9, DpPostprocess::NoiseUnits);
  postprocess_release(step, 6, 2, b, 0.9, DpPostprocess::ClassBalance);
  EXPECT_EQ(both, step);
  EXPECT_NE(both, release);
}

TEST(DpPostprocess, RefusesMismatchedShapesAndDecays) {
  std::vector<std::uint32_t> c(5, 1);
  EXPECT_THROW(postprocess_release(c, 3, 2, Rational{1, 1}, 0.5, DpPostprocess::Threshold), Error);
  std::vector<std::uint32_t> d(6, 1);
  EXPECT_THROW(postprocess_release(d, 3, 2, Rational{1, 1}, 1.0, DpPostprocess::NoiseUnits), Error);
  EXPECT_THROW(postprocess_release(d, 3, 2, Rational{1, 1}, -0.1, DpPostprocess::None), Error);
}

// With second-order filters a class's cells are two blocks whose filters decay differently
// (units at γ, pair cells at Defaults::pair_gamma): each mode acts on each block at its own
// decay, and class balance weighs a class's pair cells against the other classes' pair
// cells only, exactly as if each block were a release of its own.
TEST(DpPostprocess, PairCellsArePostprocessedAsABlockOfTheirOwnAtTheirOwnDecay) {
  FlyConfig config;
  config.m = 4;
  config.rho = 1;
  config.gamma = 0.9;
  config.pairs = 1;
  const std::uint32_t cells = config.cells();  // 4 units + 32 pair cells
  ASSERT_EQ(cells, 4u + 4u * Defaults::pair_cells_per_unit);
  const std::vector<FlyConfig::CellBlock> blocks = config.cell_blocks(config.gamma);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].first, 0u);
  EXPECT_EQ(blocks[0].last, 4u);
  EXPECT_EQ(blocks[0].gamma, 0.9);
  EXPECT_EQ(blocks[1].first, 4u);
  EXPECT_EQ(blocks[1].last, cells);
  EXPECT_EQ(blocks[1].gamma, Defaults::pair_gamma);
  config.pairs = 0;
  EXPECT_EQ(config.cell_blocks(0.7).size(), 1u);
  EXPECT_EQ(config.cell_blocks(0.7)[0].last, 4u);

  // Class 0: few unit entries, many pair entries; class 1 the other way round, so one
  // balance over all cells would cut different classes than two balances do.
  const std::size_t L = 2;
  std::vector<std::uint32_t> release(L * cells, 0);
  release[0] = 300;
  for (std::uint32_t i = 4; i < cells; i += 2) release[i] = 40 + i;
  for (std::uint32_t i = 0; i < 4; ++i) release[cells + i] = 500 + 10 * i;
  release[cells + 7] = 60;
  const Rational b{30, 1};
  for (DpPostprocess how : all_dp_postprocesses()) {
    std::vector<std::uint32_t> got = release;
    postprocess_release(got, cells, L, blocks, b, how);
    // Each block cut out and post-processed alone, at its own decay.
    std::vector<std::uint32_t> expected = release;
    for (const FlyConfig::CellBlock& block : blocks) {
      const std::uint32_t width = block.last - block.first;
      std::vector<std::uint32_t> part;
      for (std::size_t l = 0; l < L; ++l)
        part.insert(part.end(), release.begin() + l * cells + block.first, release.begin() + l * cells + block.last);
      postprocess_release(part, width, L, b, block.gamma, how);
      for (std::size_t l = 0; l < L; ++l)
        std::copy(part.begin() + l * width, part.begin() + (l + 1) * width, expected.begin() + l * cells + block.first);
    }
    EXPECT_EQ(got, expected) << dp_postprocess_name(how);
    if (how == DpPostprocess::ClassBalance || how == DpPostprocess::NoiseUnits) {
      // Not what one block of every cell at the units' γ gives (the behaviour before).
      std::vector<std::uint32_t> one_block = release;
      postprocess_release(one_block, cells, L, b, config.gamma, how);
      EXPECT_NE(got, one_block) << dp_postprocess_name(how);
    }
  }
  // Blocks outside a class's cells, or with a decay outside [0, 1), are refused.
  std::vector<std::uint32_t> c = release;
  EXPECT_THROW(postprocess_release(c, cells, L, {{0, cells + 1, 0.5}}, b, DpPostprocess::None), Error);
  EXPECT_THROW(postprocess_release(c, cells, L, {{5, 4, 0.5}}, b, DpPostprocess::None), Error);
  EXPECT_THROW(postprocess_release(c, cells, L, {{0, 4, 1.0}}, b, DpPostprocess::None), Error);
  EXPECT_EQ(c, release);
}

TEST(DpPostprocess, NamesRoundTrip) {
  for (DpPostprocess p : all_dp_postprocesses()) EXPECT_EQ(parse_dp_postprocess(dp_postprocess_name(p)), p);
  try {
    parse_dp_postprocess("clamp");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'clamp' is not one of none, threshold"), std::string::npos);
  }
}

}  // namespace
}  // namespace flynn::federated
