#include "flynn/imputation.hpp"

#include <cmath>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn {

ImputationSums::ImputationSums(std::uint32_t d) : count_(d, 0), sum_(d) {}

ImputationSums ImputationSums::of(const Dataset& data) {
  ImputationSums sums(static_cast<std::uint32_t>(data.n_features));
  for (std::size_t r = 0; r < data.n_rows; ++r) sums.add_row(data.row(r));
  return sums;
}

std::uint64_t ImputationSums::missing_cells() const {
  std::uint64_t present = 0;
  for (std::uint64_t c : count_) present += c;
  return rows_ * count_.size() - present;
}

void ImputationSums::add_row(const float* row) {
  for (std::size_t j = 0; j < sum_.size(); ++j) {
    if (std::isnan(row[j])) continue;
    sum_[j].add_signed(FeatureSums::quantize(row[j]));
    ++count_[j];
  }
  ++rows_;
}

ImputationSums& ImputationSums::operator+=(const ImputationSums& o) {
  if (o.sum_.size() != sum_.size())
    throw Error(fmt::format("imputation sums of {} and {} features cannot be added",
                            sum_.size(), o.sum_.size()));
  rows_ += o.rows_;
  for (std::size_t j = 0; j < sum_.size(); ++j) {
    count_[j] += o.count_[j];
    sum_[j].add(o.sum_[j]);
  }
  return *this;
}

std::vector<std::uint64_t> ImputationSums::to_limbs() const {
  std::vector<std::uint64_t> out;
  out.reserve(1 + sum_.size() * (1 + Int192::kLimbs));
  out.push_back(rows_);
  for (std::size_t j = 0; j < sum_.size(); ++j) {
    out.push_back(count_[j]);
    sum_[j].append_limbs(out);
  }
  return out;
}

ImputationSums ImputationSums::from_limbs(const std::vector<std::uint64_t>& limbs,
                                          std::uint32_t d) {
  if (limbs.size() != 1 + std::size_t(d) * (1 + Int192::kLimbs))
    throw Error(fmt::format("imputation sums: {} limbs do not describe {} features",
                            limbs.size(), d));
  ImputationSums sums(d);
  sums.rows_ = limbs[0];
  const std::uint64_t* p = limbs.data() + 1;
  for (std::uint32_t j = 0; j < d; ++j) {
    sums.count_[j] = p[0];
    sums.sum_[j] = Int192::from_limbs(p + 1);
    p += 1 + Int192::kLimbs;
  }
  return sums;
}

std::vector<float> ImputationSums::means() const {
  std::vector<float> out(sum_.size(), 0.0f);
  const long double unit = std::ldexp(1.0L, -FeatureSums::kFractionBits);
  for (std::size_t j = 0; j < sum_.size(); ++j) {
    if (count_[j] == 0) continue;
    out[j] = static_cast<float>(sum_[j].to_long_double() / static_cast<long double>(count_[j]) * unit);
  }
  return out;
}

std::uint64_t fill_missing(Dataset& data, const std::vector<float>& fill) {
  if (fill.size() != data.n_features)
    throw Error(fmt::format("{} fill values for {} features", fill.size(), data.n_features));
  std::uint64_t filled = 0;
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    float* row = data.row(r);
    for (std::size_t j = 0; j < data.n_features; ++j) {
      if (std::isnan(row[j])) {
        row[j] = fill[j];
        ++filled;
      }
    }
  }
  return filled;
}

bool has_missing(const Dataset& data) {
  for (float v : data.features)
    if (std::isnan(v)) return true;
  return false;
}

}  // namespace flynn
