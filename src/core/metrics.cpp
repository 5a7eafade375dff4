#include "flynn/metrics.hpp"

#include "flynn/error.hpp"

namespace flynn {

double balanced_accuracy(const std::vector<std::uint32_t>& truth,
                         const std::vector<std::uint32_t>& predicted, std::size_t n_classes) {
  FLYNN_ASSERT(truth.size() == predicted.size());
  std::vector<std::uint64_t> total(n_classes, 0), correct(n_classes, 0);
  for (std::size_t i = 0; i < truth.size(); ++i) {
    FLYNN_ASSERT(truth[i] < n_classes);
    ++total[truth[i]];
    correct[truth[i]] += predicted[i] == truth[i];
  }
  double sum = 0;
  std::size_t present = 0;
  for (std::size_t l = 0; l < n_classes; ++l) {
    if (!total[l]) continue;
    sum += static_cast<double>(correct[l]) / static_cast<double>(total[l]);
    ++present;
  }
  return present ? sum / static_cast<double>(present) : 0.0;
}

double macro_f1(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted,
                std::size_t n_classes) {
  FLYNN_ASSERT(truth.size() == predicted.size());
  std::vector<std::uint64_t> tp(n_classes, 0), in_truth(n_classes, 0), in_pred(n_classes, 0);
  for (std::size_t i = 0; i < truth.size(); ++i) {
    FLYNN_ASSERT(truth[i] < n_classes && predicted[i] < n_classes);
    ++in_truth[truth[i]];
    ++in_pred[predicted[i]];
    tp[truth[i]] += predicted[i] == truth[i];
  }
  double sum = 0;
  std::size_t present = 0;
  for (std::size_t l = 0; l < n_classes; ++l) {
    if (!in_truth[l] && !in_pred[l]) continue;
    // F1 = 2·tp / (|truth = l| + |predicted = l|): 0 for a class never predicted.
    sum += 2.0 * static_cast<double>(tp[l]) / static_cast<double>(in_truth[l] + in_pred[l]);
    ++present;
  }
  return present ? sum / static_cast<double>(present) : 0.0;
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
