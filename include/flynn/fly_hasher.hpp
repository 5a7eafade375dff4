#pragma once
// FlyHash h(x) = Γρ(M x): sparse binary lifting followed by winner-take-all.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/data_view.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/lifting_matrix.hpp"
#include "flynn/preprocess.hpp"
#include "flynn/progress.hpp"
#include "flynn/row_encoder.hpp"

namespace flynn {

namespace kernels {
struct Columns;
struct OneRowPlan;
enum class Lane;
struct SparseLists;
struct OneRowPlanCache;
struct SignedColumns;
struct NarrowColumns;
}

/// Computes FlyHashes: the indices of the ρ largest entries of M·p(x), where p is the
/// config's preprocessing and M its lifting matrix.
///
/// Tie rule (fixed, documented): units are ranked by activation, larger first; among
/// equal activations the unit whose index comes first in a row-specific rotation wins:
/// unit i has tie key (i − o(x)) mod m, smaller key first, where o(x) = row_salt(x) mod m
/// and row_salt hashes the row's raw values. The rotation keeps the tie winners of
/// unrelated inputs from piling onto the same low-index units (which would make them look
/// similar), while identical inputs still get identical hashes. The hash depends on the
/// row alone: not on its position in a batch, the batch size, the thread count or the SIMD
/// target.
///
/// Exact integer path: when preprocessing is None or Normalize and a row holds only
/// integers with |v| ≤ 2^24, activations are computed exactly in int16/int32 on the raw
/// values. L2 normalisation multiplies all activations of a row by the same positive
/// number, so the winners are the exact winners of the normalised row; the float path
/// gives the same winners whenever its float sums are exact (e.g. preprocess None on small
/// integers). Other rows take the float path: activations are float sums over the row's
/// columns in ascending column order, starting from 0.
///
/// Sparse path: rows with few non-zeros (when a cost model says so; roughly fewer than
/// d/12 non-zeros for large s) are hashed through inverted lists (column → units), with
/// work proportional to their non-zeros; the winners are exactly those of the dense
/// kernels (same sums in the same order, same tie rule).
///
/// One-row path: a row of an integer path whose values fit a byte (0..255, or −127..127)
/// that would otherwise fill a block of the block kernels mostly with padding (a path's
/// rows in a call leave a partial block of at most 3/4 of the block's rows, 1/2 with the
/// byte shuffles: one row, a few rows, the tail of a batch) is hashed alone by a kernel that vectorises across units
/// (one_row_kernel.hpp): byte permutes on CPUs with AVX-512 VBMI and VNNI, byte shuffles
/// on every other SIMD target (SSSE3 and later, AVX2, NEON, SVE). Its sums are exact
/// integers, so its winners are exactly those of the block kernels. It reads a copy of the
/// lifting matrix laid out for it (about 1.1 bytes per matrix entry for the permutes, 2 for
/// the shuffles; ~0.1 s to build at the Fashion-MNIST shapes), built by the first call of
/// fewer rows than a block; until then
/// larger calls hash their tails with the block kernels, so batch jobs never build it.
///
/// Variants (config().variant not paper): each raw row is first encoded by a RowEncoder
/// (standardise, thermometer, quantise, mirror for signed lifting) and everything above
/// applies to the encoded row: its paths, its preprocessing, its row salt.
///
/// Paper-half variants (Variant::paper_half): the hasher holds two hashers, one per half
/// of FlyConfig::halves(); a row's winners are the first half's winners followed by the
/// second half's, shifted by ⌊m/2⌋ (so still ascending).
class FlyHasher {
 public:
  /// Builds the lifting matrix for `config` (validated) on `threads` threads.
  explicit FlyHasher(const FlyConfig& config, int threads = 0);
  ~FlyHasher();
  FlyHasher(FlyHasher&&) noexcept;
  FlyHasher& operator=(FlyHasher&&) noexcept;

  const FlyConfig& config() const { return config_; }
  /// The lifting matrix (for a paper-half variant: the first half's).
  const LiftingMatrix& lifting() const { return halves_[0] ? halves_[0]->lifting() : lifting_; }
  const Preprocessor& preprocessor() const { return preprocessor_; }
  std::uint32_t m() const { return config_.m; }
  std::uint32_t rho() const { return config_.rho; }
  std::uint32_t input_dim() const { return config_.input_dim; }
  /// Values per row the kernels read: input_dim(), or the encoded width with a variant.
  std::uint32_t row_width() const { return row_width_; }

  /// Sets the per-feature statistics of a standardising variant (rebuilding the encoder;
  /// the lifting matrix is kept). Hashing with such a variant throws flynn::Error until
  /// they are set. Ignored, apart from the size check, for variants that do not
  /// standardise. A paper-half variant with paper_half_min_columns also decides here what
  /// its second half hashes (second_half_hashes_raw_row), rebuilding that half when the
  /// decision changes.
  void set_feature_stats(const FeatureStats& stats);
  /// The encoder of a variant config (null for the paper's method, or while a
  /// standardising variant has no statistics).
  const RowEncoder* encoder() const {
    return halves_[0] ? halves_[0]->encoder() : encoder_.get();
  }
  /// The hashers of a paper-half variant's two halves (null otherwise).
  const FlyHasher* half(int i) const { return halves_[i].get(); }
  /// Whether a paper-half variant's second half hashes the raw row (the paper's method,
  /// until statistics are set), or the row as the first half does: set_feature_stats
  /// decides, by paper_half_hashes_raw_row (FlyConfig::paper_half_min_columns). False for
  /// other variants.
  bool second_half_hashes_raw_row() const {
    return halves_[1] && halves_[1]->config().variant.is_paper();
  }

  /// Enables (default) or disables the exact integer path; with it disabled every row
  /// takes the float path. For tests and benchmarks.
  void set_integer_path(bool enabled) {
    integer_path_ = enabled;
    for (auto& h : halves_)
      if (h) h->set_integer_path(enabled);
  }
  bool integer_path() const { return integer_path_; }
  /// Enables (default) or disables the sparse path. For tests and benchmarks.
  void set_sparse_path(bool enabled) {
    sparse_path_ = enabled;
    for (auto& h : halves_)
      if (h) h->set_sparse_path(enabled);
  }
  bool sparse_path() const { return sparse_path_; }
  /// Enables (default) or disables the one-row path; with it disabled, small calls take
  /// the block kernels like large ones. For tests and benchmarks.
  void set_one_row_path(bool enabled) {
    one_row_path_ = enabled;
    for (auto& h : halves_)
      if (h) h->set_one_row_path(enabled);
  }
  bool one_row_path() const { return one_row_path_; }
  /// Whether this machine runs a one-row kernel (every SIMD target but Highway's SCALAR)
  /// and this hasher's lifting matrix has a layout for it (built now if it was not yet);
  /// false for a paper-half variant unless both halves have one.
  bool has_one_row_kernel() const;

  /// Receives consecutive rows' hashes: rows [first_row, first_row + count), winners is
  /// count × ρ ascending unit indices. Called concurrently from worker threads (`worker`
  /// in [0, threads)); every row is delivered exactly once.
  using BlockSink = std::function<void(int worker, std::size_t first_row, std::size_t count,
                                       const std::uint32_t* winners)>;

  /// Hashes n row-major rows of input_dim() floats, streaming results to `sink`.
  void hash_stream(const float* rows, std::size_t n, int threads, const BlockSink& sink,
                   const ProgressFn& progress = {}) const;

  /// Hashes the rows of a view (float or uint8 elements, any row stride), streaming
  /// results to `sink` exactly as the float overload does: a uint8 row gets the same hash
  /// as a float row holding the same numbers, through the same kernel. Throws
  /// flynn::Error when the view's columns differ from input_dim().
  void hash_stream(const DataView& rows, int threads, const BlockSink& sink,
                   const ProgressFn& progress = {}) const;

  /// Hashes n rows into winners (n × ρ, each row ascending).
  void hash(const float* rows, std::size_t n, std::uint32_t* winners, int threads = 0,
            const ProgressFn& progress = {}) const;
  std::vector<std::uint32_t> hash(const float* rows, std::size_t n, int threads = 0) const;
  /// Hashes the rows of a view into winners (rows × ρ, each row ascending).
  void hash(const DataView& rows, std::uint32_t* winners, int threads = 0,
            const ProgressFn& progress = {}) const;

  /// Which kernel a row takes (for a paper-half variant: in the first half): "float",
  /// "uint8" (pixels: integers 0..255, summed in int16), "int8" (integers −127..127, summed
  /// in int16), "int16", "int32", "sparse-float" or "sparse-int".
  const char* row_path(const float* row) const;
  /// The same for the first row of `rows` (bytes as their values); "" when it has none.
  const char* row_path(const DataView& rows) const;

  /// A plain scalar implementation of the same function (full activation vector, sort):
  /// slow, obviously correct; the tests hold the fast kernels to it.
  void hash_row_reference(const float* row, std::uint32_t* winners) const;

  /// The hash of a row's raw values that seeds its tie rotation (−0 and +0 hash alike).
  static std::uint64_t row_salt(const float* row, std::uint32_t d);

 private:
  // hash_stream over `n` rows of element type T (float or uint8), `stride` elements apart.
  template <typename T>
  void stream_rows(const T* rows, std::size_t stride, std::size_t n, int threads,
                   const BlockSink& sink, const ProgressFn& progress) const;
  // Paper-half variants: hashes both halves of each chunk of rows and joins their winners.
  void stream_halves(const DataView& rows, int threads, const BlockSink& sink,
                     const ProgressFn& progress) const;
  // The columns rows read: the mirrored layout (16-bit when narrow_ is there), and the
  // unmirrored one the int8 and int16 rows of a signed hash read (signed_columns.hpp).
  kernels::Columns mirrored_columns() const;
  kernels::Columns unmirrored_columns() const;
  // The plan that hashes the `partial` rows a task leaves of a path of `lane` one by one,
  // when the one-row path takes them (see the class comment); null when the block kernels do.
  const kernels::OneRowPlan* one_row_plan_for(kernels::Lane lane, std::size_t partial, std::size_t call_rows) const;
  // The encoder, or throws when a variant needs one that is not there yet.
  const RowEncoder* require_encoder() const;

  FlyConfig config_;
  std::uint32_t row_width_ = 0;
  std::unique_ptr<RowEncoder> encoder_;  // null for the paper's method
  Preprocessor preprocessor_;
  LiftingMatrix lifting_;
  // The matrix as 16-bit columns when d' ≤ 2^16 (built at once, or on first use by a
  // signed variant, whose integer rows read signed_columns_ instead).
  std::unique_ptr<kernels::NarrowColumns> narrow_;
  std::unique_ptr<kernels::SignedColumns> signed_columns_;  // signed variants, d' ≤ 2^16
  std::unique_ptr<kernels::SparseLists> sparse_;  // inverted lists, built on first use
  std::unique_ptr<kernels::OneRowPlanCache> one_row_;  // one-row layout, built on first use
  bool integer_path_ = true;
  bool sparse_path_ = true;
  bool one_row_path_ = true;
  std::array<std::unique_ptr<FlyHasher>, 2> halves_;  // paper-half variants only
  int build_threads_ = 0;  // for a second half rebuilt when the statistics are set
};

}  // namespace flynn
