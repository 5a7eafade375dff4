#pragma once
// Classification metrics: the one home for accuracy figures used by the CLI, the
// federated layer and the evaluation layer.
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

/// Macro-averaged F1: the mean over classes that occur in `truth` or `predicted` of
/// 2·TP_l / (rows of class l + rows predicted l), as scikit-learn's
/// f1_score(average="macro") over those labels. Class ids < n_classes.
double macro_f1(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted,
                std::size_t n_classes);

}  // namespace flynn
