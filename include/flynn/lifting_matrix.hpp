#pragma once
// The sparse binary lifting matrix M ∈ {0,1}^{m×d'} of FlyHash.
#include <cstdint>
#include <vector>

namespace flynn {

/// Row j of M holds exactly s distinct column indices in [0, d'), stored in ascending order.
///
/// Generation (portable, pinned by golden tests): row j draws from
/// SeededRng::keyed(seed, RngStream::LiftingMatrix, j) with Robert Floyd's algorithm for a
/// uniform s-subset of {0, …, d'−1}:
///     for t = d'−s … d'−1:  r = uniform_below(t+1);  add t if r is already chosen, else r
/// then the s columns are sorted. Rows are independent, so the matrix is the same whatever
/// the number of threads that build it.
class LiftingMatrix {
 public:
  LiftingMatrix() = default;
  /// Builds the m×d' matrix with s ones per row on `threads` threads (0 = all cores).
  ///
  /// With `signed_rows` (the signed-lifting variants) `columns` is 2w, even: each row picks
  /// its s distinct columns among the first w as above, then draws signs from
  /// SeededRng::keyed(seed, RngStream::LiftingSigns, j) (bit k of successive 64-bit draws
  /// for the row's k-th column in ascending order; 1 = −1) and moves a column c with sign
  /// −1 to w + c, the mirrored copy −e_c of the encoded row. The columns are then sorted.
  LiftingMatrix(std::uint32_t m, std::uint32_t s, std::uint32_t columns, std::uint64_t seed,
                int threads = 0, bool signed_rows = false);

  std::uint32_t rows() const { return m_; }
  std::uint32_t ones_per_row() const { return s_; }
  std::uint32_t columns() const { return columns_; }
  /// The s ascending column indices of row j.
  const std::uint32_t* row(std::uint32_t j) const { return cols_.data() + std::size_t(j) * s_; }
  /// All rows back to back (m·s indices).
  const std::vector<std::uint32_t>& data() const { return cols_; }

  /// Writes row j of the matrix for (seed, s, columns) to out[0..s). `scratch` must hold
  /// `columns` bytes, all zero; it is left all zero.
  static void generate_row(std::uint64_t seed, std::uint32_t j, std::uint32_t s,
                           std::uint32_t columns, std::uint32_t* out, std::uint8_t* scratch);
  /// Applies row j's signs (see the constructor) to its s ascending columns among the
  /// first w; they stay ascending.
  static void apply_signs(std::uint64_t seed, std::uint32_t j, std::uint32_t s, std::uint32_t w,
                          std::uint32_t* cols);

 private:
  std::uint32_t m_ = 0, s_ = 0, columns_ = 0;
  std::vector<std::uint32_t> cols_;
};

}  // namespace flynn
