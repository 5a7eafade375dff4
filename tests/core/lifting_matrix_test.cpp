// The lifting matrix: exactly s distinct ascending columns per row, independent of thread
// count, pinned by golden vectors from an independent Python implementation
// (tests/golden/lifting_matrix_golden.py) so parties on different builds agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "flynn/lifting_matrix.hpp"
#include "flynn/random.hpp"

namespace flynn {
namespace {

std::vector<std::uint32_t> row_of(const LiftingMatrix& M, std::uint32_t j) {
  return {M.row(j), M.row(j) + M.ones_per_row()};
}

TEST(LiftingMatrix, GoldenSmall) {
  const LiftingMatrix M(6, 2, 4, 5489, 1);
  const std::vector<std::vector<std::uint32_t>> expected = {{0, 1}, {0, 2}, {1, 3},
                                                            {2, 3}, {1, 2}, {2, 3}};
  for (std::uint32_t j = 0; j < 6; ++j) EXPECT_EQ(row_of(M, j), expected[j]) << "row " << j;
  const LiftingMatrix N(4, 3, 10, 1, 1);
  const std::vector<std::vector<std::uint32_t>> expected_n = {{0, 1, 9}, {2, 4, 8}, {1, 3, 8}, {0, 3, 8}};
  for (std::uint32_t j = 0; j < 4; ++j) EXPECT_EQ(row_of(N, j), expected_n[j]) << "row " << j;
}

TEST(LiftingMatrix, GoldenFashionMnistShape) {
  const LiftingMatrix M(3, 82, 784, 5489, 1);
  const std::vector<std::uint32_t> row0 = {
      28,  45,  71,  78,  80,  82,  88,  116, 119, 134, 142, 143, 154, 158, 163, 167, 168,
      172, 185, 206, 220, 245, 247, 257, 266, 270, 281, 283, 288, 291, 298, 303, 304, 311,
      313, 334, 337, 341, 344, 358, 378, 388, 396, 414, 426, 428, 436, 437, 460, 464, 465,
      475, 476, 487, 510, 513, 520, 561, 569, 574, 579, 589, 608, 623, 651, 660, 667, 668,
      671, 687, 690, 698, 699, 701, 714, 717, 720, 735, 739, 745, 751, 755};
  EXPECT_EQ(row_of(M, 0), row0);
  const std::vector<std::uint32_t> row2_head = {12, 18, 21, 33, 52, 81, 97, 102};
  EXPECT_EQ(std::vector<std::uint32_t>(M.row(2), M.row(2) + 8), row2_head);
  EXPECT_EQ(M.row(2)[81], 783u);
}

TEST(LiftingMatrix, GoldenRowFarInto) {
  // Row 99999 of a 100000-row matrix: rows are keyed by index, not generated in sequence.
  const LiftingMatrix M(100000, 5, 50, 7, 2);
  EXPECT_EQ(row_of(M, 99999), (std::vector<std::uint32_t>{6, 17, 18, 33, 42}));
}

TEST(LiftingMatrix, ExactlySDistinctAscendingOnes) {
  for (std::uint32_t s : {1u, 2u, 7u, 30u, 31u}) {
    const LiftingMatrix M(500, s, 31, 123, 2);
    for (std::uint32_t j = 0; j < M.rows(); ++j) {
      const auto r = row_of(M, j);
      ASSERT_EQ(r.size(), s);
      for (std::uint32_t k = 0; k < s; ++k) {
        ASSERT_LT(r[k], 31u);
        if (k) {
          ASSERT_LT(r[k - 1], r[k]) << "row " << j << " not strictly ascending";
        }
      }
    }
  }
}

TEST(LiftingMatrix, FullRowWhenSEqualsD) {
  const LiftingMatrix M(10, 8, 8, 3, 1);
  for (std::uint32_t j = 0; j < 10; ++j)
    EXPECT_EQ(row_of(M, j), (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// The build's definition, written plainly: Floyd's draws, a sort, the signs' moves, a sort
// again. The library collects and partitions instead of sorting; every row must be the same.
std::vector<std::uint32_t> reference_row(std::uint64_t seed, std::uint32_t j, std::uint32_t s, std::uint32_t columns,
                                         bool signed_rows) {
  const std::uint32_t w = signed_rows ? columns / 2 : columns;
  SeededRng rng = SeededRng::keyed(seed, RngStream::LiftingMatrix, j);
  std::vector<std::uint8_t> chosen(w, 0);
  std::vector<std::uint32_t> out;
  for (std::uint32_t t = w - s; t < w; ++t) {
    const auto r = static_cast<std::uint32_t>(rng.uniform_below(std::uint64_t(t) + 1));
    const std::uint32_t pick = chosen[r] ? t : r;
    chosen[pick] = 1;
    out.push_back(pick);
  }
  std::sort(out.begin(), out.end());
  if (signed_rows) {
    SeededRng signs = SeededRng::keyed(seed, RngStream::LiftingSigns, j);
    std::uint64_t bits = 0;
    for (std::uint32_t k = 0; k < s; ++k) {
      if (k % 64 == 0) bits = signs.next_u64();
      if ((bits >> (k % 64)) & 1) out[k] += w;
    }
    std::sort(out.begin(), out.end());
  }
  return out;
}

TEST(LiftingMatrix, EveryRowIsTheSortedDefinition) {
  // Shapes on both sides of the scan/sort switch (columns ≤ 16·s), s = columns, one column,
  // s above the signs' stack buffer (1024), and signed rows.
  struct Shape {
    std::uint32_t m, s, columns;
    bool signed_rows;
  };
  for (const Shape& sh : {Shape{300, 64, 784, false}, Shape{300, 64, 1568, true}, Shape{300, 7, 52, true},
                          Shape{300, 3, 5000, false}, Shape{300, 3, 5000, true}, Shape{50, 8, 8, false},
                          Shape{50, 1, 1, false}, Shape{50, 1, 2, true}, Shape{20, 1500, 3000, false},
                          Shape{20, 1500, 4000, true}, Shape{300, 16, 257, false}, Shape{300, 16, 255, true}}) {
    for (std::uint64_t seed : {1ull, 5489ull, 0xFFFFFFFFFFFFull}) {
      const LiftingMatrix M(sh.m, sh.s, sh.columns, seed, 2, sh.signed_rows);
      for (std::uint32_t j = 0; j < sh.m; ++j)
        ASSERT_EQ(row_of(M, j), reference_row(seed, j, sh.s, sh.columns, sh.signed_rows))
            << "m=" << sh.m << " s=" << sh.s << " columns=" << sh.columns << " signed=" << sh.signed_rows
            << " seed=" << seed << " row " << j;
    }
  }
}

TEST(LiftingMatrix, SameForAnyThreadCount) {
  const LiftingMatrix a(20000, 9, 100, 77, 1);
  const LiftingMatrix b(20000, 9, 100, 77, 2);
  const LiftingMatrix c(20000, 9, 100, 77, 7);
  EXPECT_EQ(a.data(), b.data());
  EXPECT_EQ(a.data(), c.data());
}

TEST(LiftingMatrix, ColumnsAreUniform) {
  // Each column is chosen with probability s/d per row: chi-square over columns.
  const std::uint32_t m = 20000, s = 5, d = 20;
  const LiftingMatrix M(m, s, d, 2024, 2);
  std::vector<double> hits(d, 0);
  for (auto c : M.data()) hits[c] += 1;
  const double expected = double(m) * s / d;
  double chi2 = 0;
  for (double h : hits) chi2 += (h - expected) * (h - expected) / expected;
  EXPECT_LT(chi2, 43.8);  // 19 dof, p = 0.001
  // Column pairs are uniform too: each of the d(d-1)/2 pairs shares a row with
  // probability s(s-1)/(d(d-1)).
  std::vector<double> pairs(d * d, 0);
  for (std::uint32_t j = 0; j < m; ++j)
    for (std::uint32_t a = 0; a < s; ++a)
      for (std::uint32_t b = a + 1; b < s; ++b) pairs[M.row(j)[a] * d + M.row(j)[b]] += 1;
  const double pair_expected = double(m) * s * (s - 1) / (d * (d - 1));
  double pair_chi2 = 0;
  for (std::uint32_t a = 0; a < d; ++a)
    for (std::uint32_t b = a + 1; b < d; ++b)
      pair_chi2 += (pairs[a * d + b] - pair_expected) * (pairs[a * d + b] - pair_expected) / pair_expected;
  EXPECT_LT(pair_chi2, 250.0);  // 189 dof, p ≈ 0.002
}

TEST(LiftingMatrix, SeedChangesMatrix) {
  const LiftingMatrix a(50, 5, 20, 2024, 1), b(50, 5, 20, 2025, 1);
  EXPECT_NE(a.data(), b.data());
}

}  // namespace
}  // namespace flynn
