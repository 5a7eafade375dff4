#pragma once
// The variant encoding of rows before FlyHash (standardise, thermometer codes, anchor units, fixed-point
// quantisation, mirroring for signed lifting): see Variant in config.hpp.
#include <cstdint>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/feature_stats.hpp"

namespace flynn {

/// Encodes raw rows of d features into rows of width() values, the row the lifting matrix
/// of a variant config reads: each value is first transformed (FlyConfig::value_transform),
/// then encoded as Variant describes. Deterministic: each value is computed in double from
/// the row and the statistics alone and rounded once to float.
class RowEncoder {
 public:
  /// `stats` must hold config.input_dim features when the variant standardises (throws
  /// flynn::Error otherwise); it is ignored when it does not.
  RowEncoder(const FlyConfig& config, const FeatureStats& stats);

  std::uint32_t input_dim() const { return d_; }
  /// Values per encoded row: FlyConfig::hash_input_dim() (2w with signed lifting).
  std::uint32_t width() const { return width_; }
  /// Writes the encoded row (width() floats) to `out`.
  void encode(const float* in, float* out) const;
  /// The thermometer thresholds or anchor grid points t_1 < … < t_K (empty without
  /// either).
  const std::vector<double>& thresholds() const { return thresholds_; }

 private:
  Variant variant_;
  ValueTransform transform_ = ValueTransform::None;  // applied first (FlyConfig::value_transform)
  std::uint32_t d_ = 0;
  std::uint32_t width_ = 0;
  std::vector<double> mean_, inv_scale_;
  std::vector<double> thresholds_;
};

/// The standard normal quantile Φ⁻¹(p) for p in (0, 1), by bisection on erfc (to 1e-12;
/// deterministic).
double normal_quantile(double p);

}  // namespace flynn
