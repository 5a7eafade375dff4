#pragma once
// Scrambled Halton points: a quasi-random (low-discrepancy) design for the
// hyper-parameter search, randomised from SeededRng so it is reproducible from a seed.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace flynn::eval {

/// The first `dims` primes (2, 3, 5, 7, …) used as Halton bases; dims ≤ 16.
std::vector<std::uint32_t> halton_bases(std::size_t dims);

/// Scrambled Halton sequence in [0, 1)^dims.
///
/// Point i, coordinate j is the radical inverse of i in base p_j with every digit passed
/// through a random permutation of {0, …, p_j − 1}, one permutation per (dimension, digit
/// position), drawn from SeededRng stream (seed, Search, 1000 + j) by Fisher–Yates
/// ("random digit scrambling"). Digits are taken to a depth where p^−depth < 2^−40,
/// including the leading zeros of small indices, so the scrambled points keep the
/// sequence's stratification (each run of p^k consecutive points hits every interval of
/// width p^−k once per coordinate) without the unscrambled sequence's correlated leading
/// dimensions and its point at the origin.
class ScrambledHalton {
 public:
  ScrambledHalton(std::size_t dims, std::uint64_t seed);
  std::size_t dims() const { return bases_.size(); }
  /// Coordinates of point `index` (dims() values in [0, 1)).
  std::vector<double> point(std::uint64_t index) const;

 private:
  std::vector<std::uint32_t> bases_;
  std::vector<std::uint32_t> depth_;                          // digits per dimension
  std::vector<std::vector<std::vector<std::uint32_t>>> perm_; // [dim][digit] → permutation
};

}  // namespace flynn::eval
