#include "flynn/eval/reliability.hpp"

#include <algorithm>
#include <cmath>

#include "flynn/error.hpp"

namespace flynn::eval {

ConfidenceBins::ConfidenceBins(std::size_t bins) {
  if (bins == 0) throw Error("ECE: needs at least one bin");
  bins_.resize(bins);
  for (std::size_t b = 0; b < bins; ++b) {
    bins_[b].lower = static_cast<double>(b) / static_cast<double>(bins);
    bins_[b].upper = static_cast<double>(b + 1) / static_cast<double>(bins);
  }
}

void ConfidenceBins::add(const double* p, std::size_t L, std::uint32_t label) {
  const std::size_t top = static_cast<std::size_t>(std::max_element(p, p + L) - p);
  const std::size_t B = bins_.size();
  // Bin (b/B, (b+1)/B]: ceil(conf·B) − 1, with 0 going to the first bin.
  const double scaled = std::ceil(p[top] * static_cast<double>(B)) - 1.0;
  ConfidenceBin& bin =
      bins_[static_cast<std::size_t>(std::clamp(scaled, 0.0, static_cast<double>(B - 1)))];
  bin.confidence_sum += p[top];
  bin.correct += top == label ? 1 : 0;
  ++bin.rows;
  ++rows_;
}

double ConfidenceBins::ece() const {
  if (rows_ == 0) return 0.0;
  double ece = 0.0;
  for (const ConfidenceBin& b : bins_)
    if (b.rows > 0)
      ece += std::abs(static_cast<double>(b.correct) - b.confidence_sum);  // n_b·|acc_b − conf_b|
  return ece / static_cast<double>(rows_);
}

}  // namespace flynn::eval
