#include "flynn/feature_stats.hpp"

#include <cmath>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn {

void Int192::add(const Int192& o) {
  unsigned __int128 carry = 0;
  for (int i = 0; i < 3; ++i) {
    const unsigned __int128 t = static_cast<unsigned __int128>(w[i]) + o.w[i] + carry;
    w[i] = static_cast<std::uint64_t>(t);
    carry = t >> 64;
  }
}

void Int192::add_signed(std::int64_t v) {
  const std::uint64_t ext = v < 0 ? ~0ULL : 0ULL;
  add(Int192{{static_cast<std::uint64_t>(v), ext, ext}});
}

void Int192::add_unsigned(unsigned __int128 v) {
  add(Int192{{static_cast<std::uint64_t>(v), static_cast<std::uint64_t>(v >> 64), 0}});
}

long double Int192::to_long_double() const {
  const bool negative = w[2] >> 63;
  Int192 mag = *this;
  if (negative) {  // two's complement negation
    for (auto& x : mag.w) x = ~x;
    mag.add_unsigned(1);
  }
  const long double two64 = 18446744073709551616.0L;
  const long double v = (static_cast<long double>(mag.w[2]) * two64 + mag.w[1]) * two64 + mag.w[0];
  return negative ? -v : v;
}

FeatureSums::FeatureSums(std::uint32_t d, ValueTransform transform)
    : transform_(transform), sum_(d), sum_sq_(d) {}

FeatureSums FeatureSums::of(const Dataset& data, ValueTransform transform) {
  FeatureSums sums(static_cast<std::uint32_t>(data.n_features), transform);
  for (std::size_t r = 0; r < data.n_rows; ++r) sums.add_row(data.features.data() + r * data.n_features);
  return sums;
}

std::int64_t FeatureSums::quantize(float v) {
  // 2^(62−24) = 2^38: the largest |v| represented without clamping.
  constexpr double kLimit = double(1ULL << kMaxMagnitudeBits);
  constexpr double kScale = double(1ULL << kFractionBits);
  double q = std::nearbyint(static_cast<double>(v) * kScale);
  if (!(q < kLimit)) q = kLimit;  // also maps NaN to the limit: never UB
  if (q < -kLimit) q = -kLimit;
  return static_cast<std::int64_t>(q);
}

void FeatureSums::add_row(const float* row) {
  for (std::size_t j = 0; j < sum_.size(); ++j) {
    const std::int64_t qi = quantize(transform_value(transform_, row[j]));
    sum_[j].add_signed(qi);
    const unsigned __int128 mag = static_cast<unsigned __int128>(qi < 0 ? -qi : qi);
    sum_sq_[j].add_unsigned(mag * mag);
  }
  ++rows_;
}

FeatureSums& FeatureSums::operator+=(const FeatureSums& o) {
  if (o.sum_.size() != sum_.size())
    throw Error(fmt::format("feature sums of {} and {} features cannot be added", sum_.size(),
                            o.sum_.size()));
  if (o.transform_ != transform_)
    throw Error(fmt::format("feature sums under value transforms {} and {} cannot be added",
                            value_transform_name(transform_), value_transform_name(o.transform_)));
  rows_ += o.rows_;
  for (std::size_t j = 0; j < sum_.size(); ++j) {
    sum_[j].add(o.sum_[j]);
    sum_sq_[j].add(o.sum_sq_[j]);
  }
  return *this;
}

namespace {
constexpr int kLimbsPerValue = Int192::kLimbs;  // 192 bits as 32-bit limbs
}  // namespace

void Int192::append_limbs(std::vector<std::uint64_t>& out) const {
  for (int i = 0; i < 3; ++i) {
    out.push_back(w[i] & 0xFFFFFFFFu);
    out.push_back(w[i] >> 32);
  }
}

// Rebuilds a value from limbs that may each exceed 32 bits after summation.
Int192 Int192::from_limbs(const std::uint64_t* limbs) {
  Int192 v;
  for (int i = 0; i < kLimbs; ++i) {
    // limb i weighs 2^(32 i): split it into its low and high 32-bit halves and add each
    // at its place (mod 2^192).
    const int word = i / 2;
    Int192 part;
    if (i % 2 == 0) {
      part.w[word] = limbs[i];
    } else {
      part.w[word] = limbs[i] << 32;
      if (word + 1 < 3) part.w[word + 1] = limbs[i] >> 32;
    }
    v.add(part);
  }
  return v;
}

std::vector<std::uint64_t> FeatureSums::to_limbs() const {
  std::vector<std::uint64_t> out;
  out.reserve(1 + sum_.size() * 2 * kLimbsPerValue);
  out.push_back(rows_);
  for (std::size_t j = 0; j < sum_.size(); ++j) {
    sum_[j].append_limbs(out);
    sum_sq_[j].append_limbs(out);
  }
  return out;
}

FeatureSums FeatureSums::from_limbs(const std::vector<std::uint64_t>& limbs, std::uint32_t d,
                                    ValueTransform transform) {
  if (limbs.size() != 1 + std::size_t(d) * 2 * kLimbsPerValue)
    throw Error(fmt::format("feature sums: {} limbs do not describe {} features", limbs.size(), d));
  FeatureSums sums(d, transform);
  sums.rows_ = limbs[0];
  const std::uint64_t* p = limbs.data() + 1;
  for (std::uint32_t j = 0; j < d; ++j) {
    sums.sum_[j] = Int192::from_limbs(p);
    sums.sum_sq_[j] = Int192::from_limbs(p + kLimbsPerValue);
    p += 2 * kLimbsPerValue;
  }
  return sums;
}

FeatureStats FeatureSums::stats() const {
  if (rows_ == 0) throw Error("feature statistics need at least one training row");
  FeatureStats st;
  st.mean.resize(sum_.size());
  st.scale.resize(sum_.size());
  const long double n = static_cast<long double>(rows_);
  const long double unit = std::ldexp(1.0L, -kFractionBits);
  for (std::size_t j = 0; j < sum_.size(); ++j) {
    const long double mean_q = sum_[j].to_long_double() / n;
    const long double var_q = sum_sq_[j].to_long_double() / n - mean_q * mean_q;
    st.mean[j] = static_cast<float>(mean_q * unit);
    const long double sd = var_q > 0.0L ? std::sqrt(var_q) * unit : 0.0L;
    const float scale = static_cast<float>(sd);
    st.scale[j] = scale > 0.0f && std::isfinite(scale) ? scale : 1.0f;
  }
  return st;
}

double raw_energy_columns(const FeatureStats& stats) {
  long double sum = 0.0L, sum_sq = 0.0L;
  for (std::size_t j = 0; j < stats.mean.size(); ++j) {
    const long double scale = stats.scale[j], mean = stats.mean[j];
    const long double e = scale * scale + mean * mean;
    sum += e;
    sum_sq += e * e;
  }
  return sum_sq > 0.0L ? static_cast<double>(sum * sum / sum_sq) : 0.0;
}

bool paper_half_hashes_raw_row(const FlyConfig& config, const FeatureStats& stats) {
  if (config.paper_half_min_columns == 0 || stats.empty()) return true;
  return raw_energy_columns(stats) >= static_cast<double>(config.paper_half_min_columns);
}

}  // namespace flynn
