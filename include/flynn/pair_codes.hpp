#pragma once
// Second-order Fly Bloom Filters (FlyConfig::pairs; docs/design/defaults.md, "Second-order
// filters"). One filter per class over unit counts cannot see which winners occur
// *together* in a class's rows (kNN on the same hashes beats every function of per-class
// unit counts); counting pairs of winners per class can, and it is still one
// pass of integer counting into one table per class, so merge, forget, federation and the
// DP release work on it as on units.
//
// The codes of a row (a function of its winner set and the seed alone):
//   * its ρ winners, as the hash gives them (cells 0…m−1);
//   * its pairs·ρ pair cells (cells m…m+M−1, M = FlyConfig::pair_cells()): the winners are
//     ordered by a fixed pseudo-random priority of the unit (the high 32 bits of
//     mix64(unit ^ key), ties by unit), each is paired with the next `pairs` in that order
//     (cyclically), and the unordered pair {a, b}, a < b, goes to cell
//     ⌊mix64((a·2^32 + b) ^ key) · M / 2^64⌋; a cell this row already took is passed over
//     for the next free one (cyclically), so a row's pair cells are distinct.
// key = SeededRng::keyed(seed, PairCodes, 0).next_u64(). Distinct codes keep two facts every
// check of counts relies on: a row adds at most 1 to any count (the DP release's
// sensitivity; no count exceeds its class's rows) and exactly codes_per_row() to its
// class's sum (model files and the federation's aggregate check).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flynn/config.hpp"

namespace flynn {

class PairCoder {
 public:
  explicit PairCoder(const FlyConfig& config);

  /// Whether the config has second-order filters (else codes are the winners).
  bool active() const { return pairs_ > 0; }
  /// ρ·(1 + pairs).
  std::uint32_t codes_per_row() const { return rho_ * (1 + pairs_); }

  /// One thread's working memory (reused across rows and blocks).
  struct Scratch {
    std::vector<std::uint64_t> order;   // ρ priority keys
    std::vector<std::uint32_t> taken;   // the cells this row took, by slot
    std::vector<std::uint32_t> stamp;   // the row (generation) each slot belongs to
    std::uint32_t generation = 0;
    std::vector<std::uint32_t> codes;   // block_codes' output
  };

  /// Writes one row's codes_per_row() codes to `out`: its ρ winners (as given), then its
  /// pair cells, each in [m, m + M) and distinct.
  void row_codes(const std::uint32_t* winners, std::uint32_t* out, Scratch& scratch) const;
  /// The codes of n rows (n × codes_per_row(), row-major, in scratch.codes), or `winners`
  /// itself without pairs.
  const std::uint32_t* block_codes(const std::uint32_t* winners, std::size_t n, Scratch& scratch) const;

 private:
  std::uint32_t m_, rho_, pairs_, cells_;
  std::uint64_t key_;
};

}  // namespace flynn
