#pragma once
// Reliability of class probabilities: rows binned by the probability of their top class
// (their confidence), each bin's mean confidence against the fraction of its rows whose top
// class is right. The one home of this binning: expected_calibration_error (calibration.hpp)
// is the rows-weighted gap of these bins, and a report's reliability diagram draws them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace flynn::eval {

/// One bin of confidences (lower, upper] (the first bin also takes a confidence of 0).
struct ConfidenceBin {
  double lower = 0.0, upper = 0.0;
  std::uint64_t rows = 0;       ///< rows whose confidence falls in the bin
  double confidence_sum = 0.0;  ///< sum of their confidences
  std::uint64_t correct = 0;    ///< rows whose top class is their class
  /// Mean confidence of the bin's rows (0 for an empty bin).
  double mean_confidence() const { return rows ? confidence_sum / static_cast<double>(rows) : 0.0; }
  /// Fraction of the bin's rows whose top class is right (0 for an empty bin).
  double accuracy() const {
    return rows ? static_cast<double>(correct) / static_cast<double>(rows) : 0.0;
  }
};

/// Rows binned by confidence with `bins` equal-width bins of [0, 1], added one at a time
/// (so a file can be judged chunk by chunk). A row's top class is the first of equal
/// maxima of its probabilities; it lands in bin ⌈confidence·B⌉ − 1 (0 for confidence 0).
class ConfidenceBins {
 public:
  /// Throws flynn::Error when `bins` is 0.
  explicit ConfidenceBins(std::size_t bins);
  /// Adds one row: `proba` holds its n_classes probabilities, `label` (< n_classes) its
  /// class.
  void add(const double* proba, std::size_t n_classes, std::uint32_t label);
  /// Rows added so far.
  std::uint64_t rows() const { return rows_; }
  const std::vector<ConfidenceBin>& bins() const { return bins_; }
  /// Expected calibration error: Σ_b (n_b / n)·|accuracy_b − confidence_b| over the
  /// non-empty bins (0 for no rows).
  double ece() const;

 private:
  std::vector<ConfidenceBin> bins_;
  std::uint64_t rows_ = 0;
};

}  // namespace flynn::eval
