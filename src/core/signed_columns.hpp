#pragma once
// The signed lifting matrix laid out for the integer block kernels without the mirror.
//
// Signed lifting (config.hpp, Variant 4.) is computed as an unsigned lifting over the
// mirrored row [e, −e]: 2w columns, so a block of 32 int8 rows of Fashion-MNIST's zsign-q
// encoding is 50 KiB and falls out of a 32 KiB L1 cache, and every other load goes to L2.
// For integer rows the mirror is not needed: a unit's activation is the sum of its
// positive columns of e minus the sum of its negative ones, and integer sums (exact, and
// wrapping alike in any order) do not depend on the order of the terms, so the block keeps
// only e (w columns, 25 KiB) and the kernel subtracts. The float kernel keeps the mirrored
// layout: float sums depend on their order, and the winners must not.
//
// Layout: units are reordered so that their numbers of positive columns ascend (a stable
// counting sort), which lets the kernel sum four units at a time with one add/subtract
// split; the top-ρ result does not depend on the order units are offered in (topk.hpp).
#include <cstdint>
#include <mutex>
#include <vector>

#include "flynn/lifting_matrix.hpp"

namespace flynn::kernels {

struct SignedColumns {
  /// Position p's s columns of e (indices < w): first positives[p] positive columns in
  /// ascending order, then the negative ones in ascending order.
  std::vector<std::uint16_t> columns;
  /// The unit at position p.
  std::vector<std::uint32_t> units;
  /// How many of position p's columns are positive; ascending over positions.
  std::vector<std::uint16_t> positives;

  /// Builds the layout of a signed lifting matrix over 2w mirrored columns (w ≤ 65536,
  /// s ≤ 65535): the columns ≥ w are the mirrored, negative ones.
  static SignedColumns build(const LiftingMatrix& lifting, std::uint32_t w);
};

/// The lifting matrix as 16-bit columns (the kernels' narrow layout), built on first use:
/// a signed hasher's integer rows read SignedColumns, and only its float and int32 rows
/// (and all-zero rows) need this mirrored copy, so it is not kept until one comes.
struct NarrowColumns {
  std::once_flag once;
  std::vector<std::uint16_t> columns;
  const std::uint16_t* get(const LiftingMatrix& M) {
    std::call_once(once, [&] { columns.assign(M.data().begin(), M.data().end()); });
    return columns.data();
  }
};

}  // namespace flynn::kernels
