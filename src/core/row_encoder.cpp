#include "flynn/row_encoder.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn {

double normal_quantile(double p) {
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = 0.5 * (lo + hi);
    const double cdf = 0.5 * std::erfc(-mid / std::sqrt(2.0));
    (cdf < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

RowEncoder::RowEncoder(const FlyConfig& config, const FeatureStats& stats)
    : variant_(config.variant),
      transform_(config.value_transform),
      d_(config.input_dim),
      width_(config.hash_input_dim()) {
  if (variant_.standardize) {
    if (stats.mean.size() != d_ || stats.scale.size() != d_)
      throw Error(fmt::format("variant {} needs feature statistics for {} features, the model "
                              "holds {} (train the model first)",
                              variant_name(variant_), d_, stats.mean.size()));
    mean_.assign(stats.mean.begin(), stats.mean.end());
    inv_scale_.resize(d_);
    for (std::uint32_t j = 0; j < d_; ++j) inv_scale_[j] = 1.0 / static_cast<double>(stats.scale[j]);
  }
  // Thermometer thresholds and anchor grid points: the same fixed normal quantiles.
  const std::uint32_t K = variant_.thermometer ? variant_.thermometer : variant_.anchors;
  for (std::uint32_t k = 1; k <= K; ++k) thresholds_.push_back(normal_quantile(double(k) / (K + 1)));
}

void RowEncoder::encode(const float* in, float* out) const {
  const double clip = Variant::kStandardClip;
  const std::uint32_t K = variant_.thermometer;
  const std::uint32_t A = variant_.anchors;
  for (std::uint32_t j = 0; j < d_; ++j) {
    // The value the statistics were summed from (FeatureSums: the same float).
    double z = transform_value(transform_, in[j]);
    if (variant_.standardize) {
      z = (z - mean_[j]) * inv_scale_[j];
      // NaN stays NaN through clamp; map it to the mean (0) so it cannot poison sums.
      z = std::isnan(z) ? 0.0 : std::clamp(z, -clip, clip);
    }
    if (K) {
      // K units per feature: [z > t_k] for ascending thresholds.
      for (std::uint32_t k = 0; k < K; ++k) out[std::size_t(j) * K + k] = z > thresholds_[k] ? 1.0f : 0.0f;
    } else if (A) {
      // A units per feature: closeness to each grid point, an integer in [0, 64].
      for (std::uint32_t k = 0; k < A; ++k) {
        const double gap = z - thresholds_[k];
        const double closeness = Variant::kAnchorReach - std::min(gap * gap, Variant::kAnchorReach);
        out[std::size_t(j) * A + k] = static_cast<float>(std::nearbyint(Variant::kAnchorSteps * closeness));
      }
    } else if (variant_.quantize) {
      out[j] = static_cast<float>(std::nearbyint(z * variant_.quantize));
    } else {
      out[j] = static_cast<float>(z);
    }
  }
  if (variant_.signed_lifting) {
    const std::uint32_t w = width_ / 2;
    // −0 and +0 are the same value for every kernel (and the row salt).
    for (std::uint32_t i = 0; i < w; ++i) out[w + i] = out[i] == 0.0f ? 0.0f : -out[i];
  }
}

}  // namespace flynn
