#pragma once
// Per-feature training statistics for the standardising variants: exact integer sums that
// add up the same however rows are split (central training, federated parties, threads),
// and the mean/scale derived from them.
#include <array>
#include <cstdint>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"

namespace flynn {

/// The mean and scale (standard deviation) of each feature, as the encoder uses them.
/// Empty vectors mean "not computed yet".
struct FeatureStats {
  std::vector<float> mean;   ///< per feature
  std::vector<float> scale;  ///< per feature, > 0 (1 for constant features)
  bool empty() const { return mean.empty(); }
  bool operator==(const FeatureStats&) const = default;
};

/// A signed 192-bit two's-complement integer, wide enough for sums of squared 62-bit
/// values over more rows than any machine holds. Addition is exact and associative, so a
/// sum does not depend on the order in which parts are added.
struct Int192 {
  std::array<std::uint64_t, 3> w{};  ///< little-endian 64-bit words
  void add(const Int192& o);
  void add_signed(std::int64_t v);         ///< adds v (sign-extended)
  void add_unsigned(unsigned __int128 v);  ///< adds v ≥ 0
  /// The value as long double (rounded); exact sums of exactly known values.
  long double to_long_double() const;
  /// Limbs per value in append_limbs / from_limbs.
  static constexpr int kLimbs = 6;
  /// Appends the value as six 32-bit limbs (one per uint64 slot, little-endian), so that
  /// element-wise sums of such vectors (an all-reduce) can be turned back into the exact
  /// sum by from_limbs.
  void append_limbs(std::vector<std::uint64_t>& out) const;
  /// The value of six limbs that may each exceed 32 bits after summation (mod 2^192).
  static Int192 from_limbs(const std::uint64_t* limbs);
  bool operator==(const Int192&) const = default;
};

/// Exact per-feature sums of fixed-point values: every value v is quantised once to
/// q = round(v · 2^kFractionBits), clamped to |q| ≤ 2^kMaxMagnitudeBits (so |v| ≤ 2^38;
/// larger values count as ±2^38, features of magnitude below 2^-24 as constant), and n,
/// Σq and Σq² are accumulated as integers. Sums of disjoint row sets add exactly, so
/// statistics from a federation's all-reduce equal those of central training on the
/// pooled rows, whatever the split.
class FeatureSums {
 public:
  static constexpr int kFractionBits = 24;
  static constexpr int kMaxMagnitudeBits = 62;

  FeatureSums() = default;
  /// Sums of rows of n_features values, each value first transformed by `transform` (the
  /// model's FlyConfig::value_transform: the statistics describe the values its encoder
  /// standardises).
  FeatureSums(std::uint32_t n_features, ValueTransform transform);
  /// The sums of a dataset's rows (its features only; labels are not used).
  static FeatureSums of(const Dataset& data, ValueTransform transform);

  /// The fixed-point value a float contributes: round(v · 2^kFractionBits), clamped to
  /// ±2^kMaxMagnitudeBits (NaN counts as the upper limit). Shared by every exact sum.
  static std::int64_t quantize(float v);

  std::uint32_t n_features() const { return static_cast<std::uint32_t>(sum_.size()); }
  std::uint64_t rows() const { return rows_; }
  /// Adds one row of n_features() values (transformed by transform()).
  void add_row(const float* row);
  /// Adds another part's sums (same feature count and transform; throws flynn::Error
  /// otherwise).
  FeatureSums& operator+=(const FeatureSums& other);

  /// The sums as 32-bit limbs, one per uint64 slot (1 + 2·d·6 slots): summing such
  /// vectors element-wise (an all-reduce) and then calling from_limbs gives the exact sum
  /// of the parts, for up to 2^32 parts.
  std::vector<std::uint64_t> to_limbs() const;
  /// Inverse of to_limbs after an element-wise sum (carries are propagated, mod 2^192); the
  /// parts' transform (the limbs do not carry it: every party sums under the agreed config).
  static FeatureSums from_limbs(const std::vector<std::uint64_t>& limbs, std::uint32_t n_features,
                                ValueTransform transform);

  /// Mean and scale of each feature: mean = Σq/(n·2^24), variance = Σq²/n − mean² (in
  /// long double, from the exact sums, so every party derives the same floats); scale =
  /// √variance, or 1 when the variance is not positive (constant feature). Throws
  /// flynn::Error when there are no rows.
  FeatureStats stats() const;

  bool operator==(const FeatureSums&) const = default;

 private:
  std::uint64_t rows_ = 0;
  ValueTransform transform_ = ValueTransform::None;
  std::vector<Int192> sum_, sum_sq_;
};

/// How many columns carry the raw rows' energy: N = (Σ_j e_j)² / Σ_j e_j², with
/// e_j = E[x_j²] = scale_j² + mean_j² from the statistics (a constant column's scale of 1
/// included). With a value transform the statistics, and so N, describe the transformed
/// columns (a compressed stand-in for the raw ones). d when every column carries the same energy, near 1 when one column dwarfs the
/// rest: then every L2-normalised raw row points nearly the same way. 0 without statistics
/// or when every e_j is 0. Computed in long double in column order from the stored floats,
/// so every party of a federation and every load of a model gets the same value.
double raw_energy_columns(const FeatureStats& stats);

/// Whether a paper-half variant's second half hashes the raw row: yes unless
/// config.paper_half_min_columns > 0 and raw_energy_columns(stats) < it (FlyConfig).
bool paper_half_hashes_raw_row(const FlyConfig& config, const FeatureStats& stats);

}  // namespace flynn
