#include "flynn/metrics.hpp"

#include "flynn/error.hpp"

namespace flynn {

ClassTally::ClassTally(std::size_t n_classes)
    : support_(n_classes, 0), predicted_(n_classes, 0), hits_(n_classes, 0) {}

ClassTally ClassTally::of(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted,
                          std::size_t n_classes) {
  FLYNN_ASSERT(truth.size() == predicted.size());
  ClassTally t(n_classes);
  for (std::size_t i = 0; i < truth.size(); ++i) t.add(truth[i], predicted[i]);
  return t;
}

void ClassTally::add(std::uint32_t truth, std::uint32_t predicted) {
  FLYNN_ASSERT(truth < support_.size() && predicted < support_.size());
  ++support_[truth];
  ++predicted_[predicted];
  ++rows_;
  if (truth == predicted) {
    ++hits_[truth];
    ++correct_;
  }
}

double ClassTally::precision(std::size_t l) const {
  return predicted_[l] ? static_cast<double>(hits_[l]) / static_cast<double>(predicted_[l]) : 0.0;
}

double ClassTally::recall(std::size_t l) const {
  return support_[l] ? static_cast<double>(hits_[l]) / static_cast<double>(support_[l]) : 0.0;
}

double ClassTally::f1(std::size_t l) const {
  // F1 = 2·tp / (|truth = l| + |predicted = l|): 0 for a class never predicted.
  const std::uint64_t both = support_[l] + predicted_[l];
  return both ? 2.0 * static_cast<double>(hits_[l]) / static_cast<double>(both) : 0.0;
}

double ClassTally::accuracy() const {
  return rows_ ? static_cast<double>(correct_) / static_cast<double>(rows_) : 0.0;
}

double ClassTally::balanced_accuracy() const {
  double sum = 0;
  std::size_t with_rows = 0;
  for (std::size_t l = 0; l < n_classes(); ++l) {
    if (!support_[l]) continue;
    sum += recall(l);
    ++with_rows;
  }
  return with_rows ? sum / static_cast<double>(with_rows) : 0.0;
}

double ClassTally::macro_f1() const {
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t l = 0; l < n_classes(); ++l) {
    if (!present(l)) continue;
    sum += f1(l);
    ++count;
  }
  return count ? sum / static_cast<double>(count) : 0.0;
}

double balanced_accuracy(const std::vector<std::uint32_t>& truth,
                         const std::vector<std::uint32_t>& predicted, std::size_t n_classes) {
  return ClassTally::of(truth, predicted, n_classes).balanced_accuracy();
}

double macro_f1(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted,
                std::size_t n_classes) {
  return ClassTally::of(truth, predicted, n_classes).macro_f1();
}

std::size_t count_correct(const std::vector<std::uint32_t>& truth,
                          const std::vector<std::uint32_t>& predicted) {
  FLYNN_ASSERT(truth.size() == predicted.size());
  std::size_t correct = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) correct += truth[i] == predicted[i];
  return correct;
}

double accuracy(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted) {
  const std::size_t correct = count_correct(truth, predicted);
  return truth.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(truth.size());
}

}  // namespace flynn
