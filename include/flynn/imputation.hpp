#pragma once
// Filling missing feature values with training means that are exact and split-independent:
// a loader marks each missing cell NaN (MissingPolicy::Mean), ImputationSums adds up the
// non-missing cells as exact integers (the fixed point of FeatureSums), and fill_missing
// replaces the NaNs with the means. Central training sums all rows; a federation sums its
// parties' ImputationSums with one all-reduce; both derive the same float means.
#include <cstdint>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/feature_stats.hpp"

namespace flynn {

/// Per-feature count and exact sum of the non-missing (non-NaN) cells.
class ImputationSums {
 public:
  ImputationSums() = default;
  explicit ImputationSums(std::uint32_t n_features);
  /// The sums over a dataset's rows; NaN cells are missing and not counted.
  static ImputationSums of(const Dataset& data);

  std::uint32_t n_features() const { return static_cast<std::uint32_t>(sum_.size()); }
  /// Rows added so far.
  std::uint64_t rows() const { return rows_; }
  /// Missing (NaN) cells seen so far, all features together.
  std::uint64_t missing_cells() const;
  /// Adds one row of n_features() values (NaN = missing).
  void add_row(const float* row);
  /// Adds another part's sums (same feature count; throws flynn::Error otherwise).
  ImputationSums& operator+=(const ImputationSums& other);

  /// The sums as 64-bit slots (1 + d · (1 + Int192::kLimbs)): rows, then per feature the
  /// non-missing count and the sum's 32-bit limbs. Element-wise sums of such vectors (an
  /// all-reduce) give, through from_limbs, the exact sum of the parts.
  std::vector<std::uint64_t> to_limbs() const;
  /// Inverse of to_limbs after an element-wise sum; throws flynn::Error on a size that
  /// does not describe `n_features` features.
  static ImputationSums from_limbs(const std::vector<std::uint64_t>& limbs,
                                   std::uint32_t n_features);

  /// The mean of each feature's non-missing cells, Σq / (count · 2^24) in long double
  /// rounded to float (q the FeatureSums fixed point); 0 for a feature with no
  /// non-missing cell.
  std::vector<float> means() const;

  bool operator==(const ImputationSums&) const = default;

 private:
  std::uint64_t rows_ = 0;
  std::vector<std::uint64_t> count_;  // non-missing cells per feature
  std::vector<Int192> sum_;           // Σ quantize(v) over them
};

/// Replaces every NaN feature value of `data` with fill[j] of its feature j (fill has
/// n_features entries; throws flynn::Error otherwise). Returns the number of cells filled.
std::uint64_t fill_missing(Dataset& data, const std::vector<float>& fill);

/// True when some feature value of `data` is NaN (a missing cell awaiting fill_missing).
bool has_missing(const Dataset& data);

}  // namespace flynn
