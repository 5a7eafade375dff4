#pragma once
// SBFC, the SimHash Bloom-filter classifier of the paper's ablation (Ram & Sinha, AAAI 2022):
//   * a dense Gaussian projection R ∈ ℝ^{m×d};
//   * hash bit i of x is [(R x)_i > 0] (SimHash: about m/2 ones);
//   * one binary Bloom filter per class, the OR of its training rows' hashes;
//   * predict argmin_l |h(x) ∧ ¬filter_l|: the class whose filter misses the fewest of
//     x's ones. Ties go to the lowest class id (the reference breaks them at random).
//
// Speed: codes and filters are bit-packed (64 units per word) and scored with popcount;
// the projection runs through BLAS (FAISS's LinearTransform, i.e. sgemm) in blocks of
// units, so memory stays O(n·block) whatever m is.
//
// The m grid is evaluated in ONE pass: unit i of R is drawn from SeededRng stream
// (seed, Baseline, kSbfcStreamTag | i), independent of m, so the SBFC with m units is
// exactly the first m units of the one with m_max units, and each grid point's scores
// are a prefix of the running popcount sums. (The reference draws a fresh R per m; ours
// are nested draws of the same distribution.)
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/progress.hpp"

namespace flynn::baselines {

/// Index tag of SBFC's projection rows within RngStream::Baseline.
inline constexpr std::uint64_t kSbfcStreamTag = 1ULL << 60;

/// The reference's grid of expansion factors m/d: {0.05, 0.1, 0.2, …, 0.9} (m < d) and
/// {1, 2, 4, …, 2048} (m ∈ [d, 2048d]).
std::vector<double> default_sbfc_grid();

/// m for an expansion factor: max(1, ⌊factor·d⌋).
std::uint32_t sbfc_units(double expansion_factor, std::size_t d);

/// SimHash codes of a set of rows, bit-packed.
struct SimHashCodes {
  std::size_t n_rows = 0;
  std::uint32_t m = 0;                ///< units (bits per row)
  std::size_t words = 0;              ///< ⌈m/64⌉ words per row
  std::vector<std::uint64_t> bits;    ///< n_rows × words; bit i of row r: word i/64, bit i%64
  bool bit(std::size_t r, std::uint32_t i) const {
    return (bits[r * words + i / 64] >> (i % 64)) & 1u;
  }
};

/// The codes of every row of `data` with m units (same projection as the CV: rows of R
/// from (seed, Baseline, kSbfcStreamTag | i)). Projections are float sgemm products, so a
/// code can differ from an exact-arithmetic one only where (R x)_i rounds across 0.
SimHashCodes simhash(const Dataset& data, std::uint32_t m, std::uint64_t seed, int threads = 0);

/// An SBFC model over precomputed codes, restricted to the first `m` units (m ≤ codes.m):
/// the straightforward fit/predict that the one-pass CV is checked against.
class SbfcModel {
 public:
  /// filter_l = OR of codes[r] over the given training rows r of class l.
  SbfcModel(const SimHashCodes& codes, std::uint32_t m, const std::vector<std::uint32_t>& labels,
            std::size_t n_classes, const std::vector<std::size_t>& train_rows);
  /// |h(x) ∧ ¬filter_l| for every class.
  std::vector<std::uint32_t> scores(const SimHashCodes& codes, std::size_t row) const;
  /// argmin of scores, lowest class id on ties.
  std::uint32_t predict(const SimHashCodes& codes, std::size_t row) const;
  /// Filter bit i of class l.
  bool filter_bit(std::size_t l, std::uint32_t i) const {
    return (filters_[l * words_ + i / 64] >> (i % 64)) & 1u;
  }

 private:
  std::uint32_t m_;
  std::size_t words_;
  std::size_t n_classes_;
  std::vector<std::uint64_t> filters_;
};

struct SbfcOptions {
  std::vector<double> expansion_factors = default_sbfc_grid();  ///< grid of m/d
  std::uint64_t seed = 0;          ///< projection seed
  /// Time guard: at most this many multiply-adds n·d·m for the largest m evaluated
  /// (~4e12 ≈ a minute of one core's sgemm); larger grid points are skipped and reported.
  double max_work = 4e12;
  int threads = 0;                 ///< projection generation (BLAS threads are global)
};

/// One evaluated grid point.
struct SbfcPoint {
  double expansion_factor = 0.0;
  std::uint32_t m = 0;
  eval::CvResult cv;
};

struct SbfcCvResult {
  std::vector<SbfcPoint> grid;          ///< evaluated points, ascending m (duplicates of m dropped)
  std::vector<double> skipped_factors;  ///< grid factors beyond the time guard
  std::size_t best = 0;                 ///< best mean accuracy (smallest m on ties)
  std::uint64_t m_limit = 0;            ///< largest m the guard allowed
  double seconds = 0.0;
};

/// k-fold CV accuracy of SBFC for every m of the grid, on the given folds, in one pass
/// over units (see the header comment). Fold f's filters are the OR of the other folds'
/// per-class ORs. `progress` counts units. Throws flynn::Error on unlabelled data or an
/// empty grid.
SbfcCvResult cross_validate_sbfc(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                 std::uint32_t k_folds, const SbfcOptions& options = {},
                                 const ProgressFn& progress = {});

}  // namespace flynn::baselines
