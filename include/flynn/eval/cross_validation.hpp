#pragma once
// Stratified k-fold cross-validation, shared by every method so that comparisons use the
// same folds.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/progress.hpp"

namespace flynn::experiments {

/// Fold id in [0, k) for every row. Within each class the rows are shuffled (Fisher–Yates
/// with SeededRng stream (seed, Folds, 0)) and dealt to folds round-robin, the deal
/// continuing from class to class, so every fold gets ⌊n_l/k⌋ or ⌈n_l/k⌉ rows of class l
/// and fold sizes differ by at most one. Throws flynn::Error when k < 2 or k > rows.
std::vector<std::uint32_t> stratified_folds(const std::vector<std::uint32_t>& labels,
                                            std::size_t n_classes, std::uint32_t k,
                                            std::uint64_t seed);

/// Train/test row indices of fold f.
struct FoldRows {
  std::vector<std::size_t> train;
  std::vector<std::size_t> test;
};
std::vector<FoldRows> fold_rows(const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k);

struct CvResult {
  std::vector<double> fold_accuracy;  ///< accuracy of each fold's test rows
  double mean = 0.0;                  ///< mean of fold accuracies
  double sd = 0.0;                    ///< sample standard deviation of fold accuracies
  double seconds = 0.0;               ///< wall time
};

/// Mean and sample standard deviation of fold accuracies.
CvResult summarize_folds(std::vector<double> fold_accuracy, double seconds);

/// FlyNN's k-fold CV accuracy for one configuration. Every row is hashed once; because
/// counts add up, fold f's training counts are total − counts(fold f), exactly the counts
/// fitting on the other folds would give. (Runs experiments::FlyCvEvaluator, which does this in
/// O(L·m) memory.)
CvResult cross_validate_flynn(const Dataset& data, const FlyConfig& config,
                              const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                              int threads = 0, const ProgressFn& progress = {});

/// The same with a whole set of γ values sharing one hashing pass (γ only changes the
/// filter values): result i is for gammas[i]. The straightforward formulation (k + 1
/// count tables, one filter table per fold and γ); the tests hold FlyCvEvaluator to it.
std::vector<CvResult> cross_validate_flynn_gammas(const Dataset& data, const FlyConfig& config,
                                                  const std::vector<double>& gammas,
                                                  const std::vector<std::uint32_t>& fold_of_row,
                                                  std::uint32_t k, int threads = 0,
                                                  const ProgressFn& progress = {});

}  // namespace flynn::experiments
