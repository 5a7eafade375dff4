#pragma once
// Classification metrics: the one home for accuracy figures used by the CLI, the
// federated layer and the experiments.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace flynn {

/// Number of rows with predicted[i] == truth[i]. The two vectors must have the same length.
std::size_t count_correct(const std::vector<std::uint32_t>& truth,
                          const std::vector<std::uint32_t>& predicted);

/// Fraction of rows with predicted[i] == truth[i] (0 for no rows). The two vectors must
/// have the same length.
double accuracy(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted);

/// Balanced accuracy: the mean over classes present in `truth` of the fraction of their
/// rows predicted correctly. `truth` and `predicted` are class ids < n_classes.
double balanced_accuracy(const std::vector<std::uint32_t>& truth,
                         const std::vector<std::uint32_t>& predicted, std::size_t n_classes);

}  // namespace flynn
