// FlyHash: invariants, the fast kernels against the scalar reference, determinism across
// threads / batch positions / SIMD targets, the tie rule, the exact integer path, locality.
#include <gtest/gtest.h>

#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "core/flyhash_kernels.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/random.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

FlyConfig make_config(std::uint32_t d, std::uint32_t m, std::uint32_t s, std::uint32_t rho,
                      Preprocess p = Preprocess::Normalize, std::uint64_t seed = 5489) {
  FlyConfig c;
  c.input_dim = d;
  c.m = m;
  c.s = s;
  c.rho = rho;
  c.gamma = 0.5;
  c.seed = seed;
  c.preprocess = p;
  return c;
}

// Small non-negative integers with many zeros: lots of exact ties.
std::vector<float> tie_heavy_rows(std::size_t n, std::size_t d, std::uint64_t seed, int max_value) {
  SeededRng r(seed);
  std::vector<float> x(n * d);
  for (auto& v : x) v = r.uniform01() < 0.6 ? 0.0f : static_cast<float>(r.uniform_below(max_value + 1));
  return x;
}

void expect_matches_reference(const FlyHasher& h, const std::vector<float>& x, std::size_t n,
                              int threads) {
  const auto fast = h.hash(x.data(), n, threads);
  std::vector<std::uint32_t> ref(h.rho());
  for (std::size_t r = 0; r < n; ++r) {
    h.hash_row_reference(x.data() + r * h.input_dim(), ref.data());
    ASSERT_TRUE(std::equal(ref.begin(), ref.end(), fast.begin() + r * h.rho()))
        << "row " << r << " differs from the reference";
  }
}

TEST(FlyHasher, ExactlyRhoDistinctAscendingWinners) {
  const FlyHasher h(make_config(20, 300, 4, 17), 1);
  const auto x = test::normal_rows(257, 20, 1);
  const auto w = h.hash(x.data(), 257, 2);
  for (std::size_t r = 0; r < 257; ++r) {
    for (std::uint32_t k = 0; k < 17; ++k) {
      ASSERT_LT(w[r * 17 + k], 300u);
      if (k) {
        ASSERT_LT(w[r * 17 + k - 1], w[r * 17 + k]);
      }
    }
  }
}

TEST(FlyHasher, FloatKernelMatchesReference) {
  const FlyHasher h(make_config(37, 1000, 6, 23), 1);
  const auto x = test::normal_rows(300, 37, 2);
  expect_matches_reference(h, x, 300, 2);
}

TEST(FlyHasher, DensifyKernelMatchesReference) {
  const FlyHasher h(make_config(37, 500, 9, 16, Preprocess::Densify), 1);
  EXPECT_EQ(h.preprocessor().output_dim(), 64u);
  const auto x = tie_heavy_rows(150, 37, 3, 9);  // integers, but densify forces the float path
  expect_matches_reference(h, x, 150, 1);
}

TEST(FlyHasher, IntegerKernelsMatchReferenceWithManyTies) {
  // uint8 path (0..255), int8 path (−127..127), int16 path (negative values past a byte),
  // int32 path (s·max > 32767), and
  // rows mixing them with float rows.
  const FlyHasher small(make_config(40, 700, 5, 31), 1);
  const auto pixels = tie_heavy_rows(200, 40, 4, 3);
  ASSERT_STREQ(small.row_path(pixels.data()), "uint8");
  expect_matches_reference(small, pixels, 200, 2);
  auto signed_rows = tie_heavy_rows(200, 40, 16, 6);
  for (auto& v : signed_rows) v -= 3.0f;
  ASSERT_STREQ(small.row_path(signed_rows.data()), "int8");
  expect_matches_reference(small, signed_rows, 200, 2);
  auto wider = tie_heavy_rows(200, 40, 19, 600);
  for (auto& v : wider) v -= 300.0f;
  ASSERT_STREQ(small.row_path(wider.data()), "int16");
  expect_matches_reference(small, wider, 200, 2);
  const FlyHasher big(make_config(40, 700, 5, 31), 1);
  const auto large = tie_heavy_rows(200, 40, 5, 60000);
  ASSERT_STREQ(big.row_path(large.data()), "int32");
  expect_matches_reference(big, large, 200, 2);
  auto mixed = tie_heavy_rows(100, 40, 6, 3);
  auto floats = test::normal_rows(100, 40, 7);
  mixed.insert(mixed.end(), floats.begin(), floats.end());
  expect_matches_reference(small, mixed, 200, 2);
}

TEST(FlyHasher, WideRowsUseHalfWidthBlocksWithTheSameWinners) {
  // 1100 columns: where a full-width float block would overflow L1 (256-bit vectors and
  // wider: 34 KiB and more), the kernels switch to half-width vectors; results must not
  // change. (NEON's and SSE's 128-bit blocks fit: 17 KiB.)
  const std::size_t full = kernels::block_shape(kernels::Lane::F32, 1).rows;
  const kernels::BlockShape wide = kernels::block_shape(kernels::Lane::F32, 1100);
  if (1100 * full * sizeof(float) > 32 * 1024) {
    ASSERT_TRUE(wide.half) << full << " lanes";
    EXPECT_LT(wide.rows, full);
  } else {
    EXPECT_FALSE(wide.half) << full << " lanes";
  }
  const FlyHasher h(make_config(1100, 800, 40, 10, Preprocess::None), 1);
  const auto floats = test::normal_rows(40, 1100, 17);
  expect_matches_reference(h, floats, 40, 2);
  auto ints = tie_heavy_rows(40, 1100, 18, 500);
  for (auto& v : ints) v -= 10.0f;
  ASSERT_STREQ(h.row_path(ints.data()), "int16");
  expect_matches_reference(h, ints, 40, 2);
  auto bytes = tie_heavy_rows(40, 1100, 20, 50);
  for (auto& v : bytes) v -= 10.0f;
  ASSERT_STREQ(h.row_path(bytes.data()), "int8");
  expect_matches_reference(h, bytes, 40, 2);
}

TEST(FlyHasher, OneRowAtATimeGivesTheBatchWinnersOnEveryPath) {
  // A call with one row (a partial block, most lanes ignored) gives it the batch's winners
  // on the float, int16 and int32 paths and the byte path.
  const FlyHasher small(make_config(40, 700, 5, 31), 1);
  const FlyHasher wide(make_config(1100, 800, 40, 10, Preprocess::None), 1);
  const auto check = [](const FlyHasher& h, const std::vector<float>& rows, std::size_t n, const char* what) {
    const std::size_t d = rows.size() / n;
    const auto batch = h.hash(rows.data(), n, 1);
    for (std::size_t i = 0; i < n; ++i) {
      const auto one = h.hash(rows.data() + i * d, 1, 1);
      ASSERT_TRUE(std::equal(one.begin(), one.end(), batch.begin() + i * h.rho())) << what << " row " << i;
    }
  };
  check(small, test::normal_rows(20, 40, 3), 20, "float");
  check(small, tie_heavy_rows(20, 40, 5, 3), 20, "int16");
  check(small, tie_heavy_rows(20, 40, 5, 60000), 20, "int32");
  check(wide, test::normal_rows(5, 1100, 17), 5, "wide float");
  std::vector<std::uint8_t> bytes(20 * 40);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>((i * 37) % 251);
  std::vector<std::uint32_t> batch(20 * small.rho()), one(small.rho());
  small.hash(DataView(bytes.data(), 20, 40), batch.data(), 1);
  for (std::size_t i = 0; i < 20; ++i) {
    small.hash(DataView(bytes.data() + i * 40, 1, 40), one.data(), 1);
    ASSERT_TRUE(std::equal(one.begin(), one.end(), batch.begin() + i * small.rho())) << "uint8 row " << i;
  }
}

TEST(FlyHasher, AllZeroRowGetsRotationWinners) {
  const FlyHasher h(make_config(10, 50, 3, 4), 1);
  std::vector<float> zero(10, 0.0f);
  std::vector<std::uint32_t> w(4);
  h.hash(zero.data(), 1, w.data(), 1);
  const std::uint32_t off = static_cast<std::uint32_t>(FlyHasher::row_salt(zero.data(), 10) % 50);
  std::vector<std::uint32_t> expected;
  for (std::uint32_t k = 0; k < 4; ++k) expected.push_back((off + k) % 50);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(w, expected);
}

TEST(FlyHasher, SameResultForAnyThreadCountAndBatchPosition) {
  const FlyHasher h(make_config(30, 2000, 5, 20), 2);
  const auto x = test::normal_rows(3000, 30, 8);
  const auto w1 = h.hash(x.data(), 3000, 1);
  const auto w2 = h.hash(x.data(), 3000, 2);
  const auto w5 = h.hash(x.data(), 3000, 5);
  EXPECT_EQ(w1, w2);
  EXPECT_EQ(w1, w5);
  // Row 1234 alone, and rows 1000.. as a batch of their own.
  const auto alone = h.hash(x.data() + 1234 * 30, 1, 1);
  EXPECT_TRUE(std::equal(alone.begin(), alone.end(), w1.begin() + 1234 * 20));
  const auto tail = h.hash(x.data() + 1000 * 30, 77, 1);
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), w1.begin() + 1000 * 20));
}

TEST(FlyHasher, SameWinnersOnEverySimdTarget) {
  const FlyHasher h(make_config(50, 1500, 7, 12), 1);
  auto x = test::normal_rows(200, 50, 9);
  const auto ints = tie_heavy_rows(200, 50, 10, 20);
  x.insert(x.end(), ints.begin(), ints.end());
  auto small_signed = tie_heavy_rows(200, 50, 11, 40);  // the int8 path
  for (auto& v : small_signed) v -= 20.0f;
  x.insert(x.end(), small_signed.begin(), small_signed.end());
  const auto baseline = h.hash(x.data(), 600, 1);
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  ASSERT_FALSE(targets.empty());
  for (std::int64_t t : targets) {
    hwy::SetSupportedTargetsForTest(t);
    const auto w = h.hash(x.data(), 600, 1);
    EXPECT_EQ(w, baseline) << "target " << hwy::TargetName(t);
  }
  hwy::SetSupportedTargetsForTest(0);
  expect_matches_reference(h, x, 600, 1);
}

TEST(FlyHasher, SignedLiftingIntegerRowsSkipTheMirrorWithTheSameWinners) {
  // Signed lifting over integer rows: the int8 and int16 kernels read e, not the mirrored
  // [e, −e], and subtract the negative columns (signed_columns.hpp). s = 1 and 2 give
  // units with no positive column (the first column negated) and with no negative one;
  // m = 701 leaves a tail of positions past the last group of four; d = 1100 and 2100 make
  // the int16 and int8 blocks half width. Every SIMD target, the reference, any threads.
  const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
  for (const std::uint32_t d : {40u, 1100u, 2100u}) {
    for (const std::uint32_t s : {1u, 2u, 3u, 8u, 16u}) {
      FlyConfig c = make_config(d, 701, s, 7, Preprocess::Normalize, 100 + s);
      c.variant = parse_variant("sign");
      const FlyHasher h(c, 1);
      auto bytes = tie_heavy_rows(64, d, 20 + s, 12);
      for (auto& v : bytes) v -= 6.0f;
      auto wide = tie_heavy_rows(64, d, 40 + s, 1200);
      for (auto& v : wide) v -= 600.0f;
      ASSERT_STREQ(h.row_path(bytes.data()), "int8");
      ASSERT_STREQ(h.row_path(wide.data()), "int16");
      std::vector<float> x = bytes;
      x.insert(x.end(), wide.begin(), wide.end());
      SCOPED_TRACE(testing::Message() << "d = " << d << ", s = " << s);
      expect_matches_reference(h, x, 128, 2);
      // Then float rows and an all-zero row (uint8): the mirrored layout, built on first use.
      const auto floats = test::normal_rows(16, d, 60 + s);
      x.insert(x.end(), floats.begin(), floats.end());
      x.insert(x.end(), d, 0.0f);
      ASSERT_STREQ(h.row_path(floats.data()), "float");
      ASSERT_STREQ(h.row_path(x.data() + 144 * std::size_t(d)), "uint8");
      expect_matches_reference(h, x, 145, 2);
      const auto baseline = h.hash(x.data(), 145, 1);
      for (std::int64_t t : targets) {
        hwy::SetSupportedTargetsForTest(t);
        EXPECT_EQ(h.hash(x.data(), 145, 1), baseline) << "target " << hwy::TargetName(t);
      }
      hwy::SetSupportedTargetsForTest(0);
    }
  }
}

TEST(FlyHasher, IntegerPathEqualsFloatPathOnSameValues) {
  // uint8-like values, preprocess none: float sums of ≤ 8 values ≤ 255 are exact, so the
  // float path must pick exactly the winners of the int16 path.
  FlyHasher h(make_config(64, 3000, 8, 16, Preprocess::None), 1);
  const auto x = tie_heavy_rows(300, 64, 11, 255);
  ASSERT_STREQ(h.row_path(x.data()), "uint8");
  const auto w_int = h.hash(x.data(), 300, 2);
  h.set_integer_path(false);
  ASSERT_STREQ(h.row_path(x.data()), "float");
  const auto w_float = h.hash(x.data(), 300, 2);
  EXPECT_EQ(w_int, w_float);
  expect_matches_reference(h, x, 300, 1);
}

// Rows with a few non-zeros, of either sign, integers or not.
std::vector<float> sparse_rows(std::size_t n, std::size_t d, std::size_t nnz, bool integers,
                               std::uint64_t seed) {
  SeededRng r(seed);
  std::vector<float> x(n * d, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < nnz; ++k) {
      const float v = integers ? static_cast<float>(static_cast<int>(r.uniform_below(7)) - 3)
                               : static_cast<float>(r.normal());
      x[i * d + r.uniform_below(d)] = v;
    }
  }
  return x;
}

TEST(FlyHasher, SparsePathGivesTheDenseWinners) {
  for (bool ints : {false, true}) {
    for (Preprocess p : {Preprocess::None, Preprocess::Normalize}) {
      FlyHasher h(make_config(400, 3000, 100, 24, p), 1);
      auto x = sparse_rows(300, 400, 6, ints, 15);
      ASSERT_STREQ(h.row_path(x.data()), ints ? "sparse-int" : "sparse-float");
      // Also an all-zero row and a row with a single non-zero.
      x.insert(x.end(), 400, 0.0f);
      std::vector<float> one(400, 0.0f);
      one[7] = ints ? 2.0f : 0.3f;
      x.insert(x.end(), one.begin(), one.end());
      const auto sparse = h.hash(x.data(), 302, 2);
      h.set_sparse_path(false);
      ASSERT_STREQ(h.row_path(x.data()), ints ? "int8" : "float");  // sparse rows hold negatives
      const auto dense = h.hash(x.data(), 302, 2);
      EXPECT_EQ(sparse, dense) << (ints ? "integer" : "float") << " rows, preprocess "
                               << preprocess_name(p);
      expect_matches_reference(h, x, 302, 1);
    }
  }
}

TEST(FlyHasher, NormalizationDoesNotChangeIntegerWinners) {
  // Scaling a row by a positive constant keeps its exact winners (int path).
  const FlyHasher h(make_config(64, 3000, 8, 16, Preprocess::Normalize), 1);
  const auto x = tie_heavy_rows(50, 64, 12, 100);
  const FlyHasher none(make_config(64, 3000, 8, 16, Preprocess::None), 1);
  EXPECT_EQ(h.hash(x.data(), 50, 1), none.hash(x.data(), 50, 1));
}

TEST(FlyHasher, TieRuleUsesRowRotation) {
  // seed 5489, d=4, m=6, s=2: units 0..5 read columns {0,1} {0,2} {1,3} {2,3} {1,2} {2,3}.
  const FlyHasher h(make_config(4, 6, 2, 2, Preprocess::None), 1);
  // x = (0,5,0,1): activations 5,0,6,1,5,1 — unit 2 wins, units 0 and 4 tie for the second
  // place; the one with the smaller rotated index (i - o) mod 6 wins.
  const std::vector<float> x = {0, 5, 0, 1};
  std::vector<std::uint32_t> w(2);
  h.hash(x.data(), 1, w.data(), 1);
  const std::uint32_t o = static_cast<std::uint32_t>(FlyHasher::row_salt(x.data(), 4) % 6);
  const std::uint32_t key0 = (0 + 6 - o) % 6, key4 = (4 + 6 - o) % 6;
  const std::uint32_t tie_winner = key0 < key4 ? 0 : 4;
  std::vector<std::uint32_t> expected = {2, tie_winner};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(w, expected);
}

TEST(FlyHasher, TiePaddingDoesNotConcentrateOnLowUnits) {
  // Sparse binary rows: the threshold is full of ties. Unrelated rows should share about
  // as many winners as random ρ-subsets would (ρ²/m), not far more.
  const std::uint32_t d = 200, m = 2000, s = 3, rho = 40;
  const FlyHasher h(make_config(d, m, s, rho, Preprocess::None), 1);
  SeededRng r(13);
  const std::size_t n = 200;
  std::vector<float> x(n * d, 0.0f);
  for (std::size_t i = 0; i < n; ++i)
    for (int k = 0; k < 10; ++k) x[i * d + r.uniform_below(d)] = 1.0f;
  const auto w = h.hash(x.data(), n, 1);
  double overlap = 0;
  for (std::size_t i = 0; i + 1 < n; i += 2) {
    std::set<std::uint32_t> a(w.begin() + i * rho, w.begin() + (i + 1) * rho);
    for (std::uint32_t k = 0; k < rho; ++k) overlap += a.count(w[(i + 1) * rho + k]);
  }
  overlap /= n / 2;
  // Rows share some real activity (10 ones each among 200 columns); with lowest-index
  // padding the overlap would be ~10+.
  EXPECT_LT(overlap, 4.0) << "mean overlap of unrelated rows";
}

TEST(FlyHasher, LocalityNearRowsShareWinners) {
  const std::uint32_t d = 50;
  const FlyHasher h(make_config(d, 5000, 10, 50), 2);
  SeededRng r(14);
  const std::size_t pairs = 100;
  std::vector<float> x(2 * pairs * d), far(2 * pairs * d);
  for (std::size_t p = 0; p < pairs; ++p) {
    for (std::uint32_t j = 0; j < d; ++j) {
      const float v = static_cast<float>(r.normal());
      x[(2 * p) * d + j] = v;
      x[(2 * p + 1) * d + j] = v + 0.05f * static_cast<float>(r.normal());
      far[(2 * p) * d + j] = static_cast<float>(r.normal());
      far[(2 * p + 1) * d + j] = static_cast<float>(r.normal());
    }
  }
  auto mean_overlap = [&](const std::vector<float>& rows) {
    const auto w = h.hash(rows.data(), 2 * pairs, 2);
    double total = 0;
    for (std::size_t p = 0; p < pairs; ++p) {
      std::set<std::uint32_t> a(w.begin() + 2 * p * 50, w.begin() + (2 * p + 1) * 50);
      for (int k = 0; k < 50; ++k) total += a.count(w[(2 * p + 1) * 50 + k]);
    }
    return total / pairs;
  };
  const double near = mean_overlap(x), random = mean_overlap(far);
  EXPECT_GT(near, 30.0);
  EXPECT_LT(random, 5.0);
  EXPECT_GT(near, 5 * random);
}

TEST(FlyHasher, HandComputedExample) {
  // seed 5489, d=4, m=6, s=2 (see TieRuleUsesRowRotation). x = (3, 2, 0.5, 0):
  // activations 5, 3.5, 2, 0.5, 2.5, 0.5 → winners {0, 1} for rho=2, {0, 1, 4} for rho=3.
  const std::vector<float> x = {3, 2, 0.5f, 0};
  std::vector<std::uint32_t> w2(2), w3(3);
  FlyHasher(make_config(4, 6, 2, 2, Preprocess::None), 1).hash(x.data(), 1, w2.data(), 1);
  FlyHasher(make_config(4, 6, 2, 3, Preprocess::None), 1).hash(x.data(), 1, w3.data(), 1);
  EXPECT_EQ(w2, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(w3, (std::vector<std::uint32_t>{0, 1, 4}));
  // Normalisation scales all activations alike: same winners.
  std::vector<std::uint32_t> wn(2);
  FlyHasher(make_config(4, 6, 2, 2, Preprocess::Normalize), 1).hash(x.data(), 1, wn.data(), 1);
  EXPECT_EQ(wn, (std::vector<std::uint32_t>{0, 1}));
}

TEST(FlyHasher, RowSaltIgnoresSignOfZero) {
  const std::vector<float> a = {0.0f, 1.0f}, b = {-0.0f, 1.0f}, c = {1.0f, 0.0f};
  EXPECT_EQ(FlyHasher::row_salt(a.data(), 2), FlyHasher::row_salt(b.data(), 2));
  EXPECT_NE(FlyHasher::row_salt(a.data(), 2), FlyHasher::row_salt(c.data(), 2));
}

}  // namespace
}  // namespace flynn
