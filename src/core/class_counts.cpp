#include "flynn/class_counts.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn {

ClassCounts::ClassCounts(std::size_t n_classes, std::uint32_t m)
    : n_classes_(n_classes), m_(m), counts_(n_classes * m, 0), rows_(n_classes, 0) {}

ClassCounts::ClassCounts(std::size_t n_classes, std::uint32_t m, std::vector<std::uint32_t> values)
    : n_classes_(n_classes), m_(m), counts_(std::move(values)), rows_(n_classes, 0) {
  if (counts_.size() != n_classes * m)
    throw Error("class counts: " + std::to_string(counts_.size()) + " values for " +
                std::to_string(n_classes) + " classes × m = " + std::to_string(m));
}

std::uint64_t ClassCounts::total_rows() const {
  std::uint64_t t = 0;
  for (auto r : rows_) t += r;
  return t;
}

namespace {
void require_same_shape(const ClassCounts& a, const ClassCounts& b, const char* op) {
  if (a.n_classes() != b.n_classes() || a.m() != b.m())
    throw Error(fmt::format("cannot {} counts of shape {}×{} and {}×{} (classes × m)", op,
                            a.n_classes(), a.m(), b.n_classes(), b.m()));
}
}  // namespace

ClassCounts& ClassCounts::operator+=(const ClassCounts& o) {
  require_same_shape(*this, o, "add");
  constexpr std::uint32_t kMax = std::numeric_limits<std::uint32_t>::max();
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (o.counts_[i] > kMax - counts_[i])
      throw Error(fmt::format("count overflow: class {} unit {} would exceed 2^32-1", i / m_,
                              i % m_));
  }
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
  for (std::size_t l = 0; l < rows_.size(); ++l) rows_[l] += o.rows_[l];
  return *this;
}

ClassCounts& ClassCounts::operator-=(const ClassCounts& o) {
  require_same_shape(*this, o, "subtract");
  for (std::size_t l = 0; l < rows_.size(); ++l) {
    if (o.rows_[l] > rows_[l])
      throw Error(fmt::format("cannot forget {} rows of class {}: the model holds only {}",
                              o.rows_[l], l, rows_[l]));
  }
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    if (o.counts_[i] > counts_[i])
      throw Error(fmt::format(
          "cannot forget these rows: class {} unit {} would go below zero (they were not "
          "all learned by this model with this configuration)",
          i / m_, i % m_));
  }
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] -= o.counts_[i];
  for (std::size_t l = 0; l < rows_.size(); ++l) rows_[l] -= o.rows_[l];
  return *this;
}

std::uint32_t ClassCounts::max_count() const {
  return counts_.empty() ? 0 : *std::max_element(counts_.begin(), counts_.end());
}

std::uint64_t ClassCounts::nonzero() const {
  return static_cast<std::uint64_t>(
      std::count_if(counts_.begin(), counts_.end(), [](std::uint32_t c) { return c != 0; }));
}

}  // namespace flynn
