#pragma once
// Stratified k-fold cross-validation, shared by every method so that comparisons use the
// same folds.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "flynn/calibration.hpp"
#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

/// Fold id in [0, k) for every row. Within each class the rows are shuffled (Fisher–Yates
/// with SeededRng stream (seed, Folds, 0)) and dealt to folds round-robin, the deal
/// continuing from class to class, so every fold gets ⌊n_l/k⌋ or ⌈n_l/k⌉ rows of class l
/// and fold sizes differ by at most one. Throws flynn::Error when k < 2 or k > rows.
std::vector<std::uint32_t> stratified_folds(const std::vector<std::uint32_t>& labels,
                                            std::size_t n_classes, std::uint32_t k,
                                            std::uint64_t seed);

/// Rows (sorted) of a stratified subsample keeping ⌈q·n_l⌉ rows of each class l (all rows
/// for q ≥ 1). Nested in q for one seed: every q takes prefixes of the same per-class
/// permutations (SeededRng stream (seed, Search, 2)), so the search's rungs grow by adding
/// rows. Throws flynn::Error on unlabelled data.
std::vector<std::size_t> stratified_subsample(const Dataset& data, double q, std::uint64_t seed);

/// Train/test row indices of fold f.
struct FoldRows {
  std::vector<std::size_t> train;
  std::vector<std::size_t> test;
};
std::vector<FoldRows> fold_rows(const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k);

/// What a search or a report judges a configuration by (`flynn tune --metric`).
enum class CvMetric : std::uint8_t {
  Accuracy,          ///< fraction of rows right
  BalancedAccuracy,  ///< mean over classes of the fraction of their rows right
  MacroF1,           ///< mean over classes of F1 (metrics.hpp)
  /// Log-loss of the calibrated probabilities (calibration.hpp: out_of_fold_log_loss);
  /// lower is better, so CvResult::metric gives minus it (scikit-learn's neg_log_loss).
  LogLoss,
};
/// "accuracy", "balanced_accuracy", "macro_f1", "log_loss"; throws flynn::Error listing
/// them otherwise.
CvMetric parse_cv_metric(const std::string& name);
const char* cv_metric_name(CvMetric m);

struct CvResult {
  std::vector<double> fold_accuracy;  ///< accuracy of each fold's test rows
  double mean = 0.0;                  ///< mean of fold accuracies
  double sd = 0.0;                    ///< sample standard deviation of fold accuracies
  double seconds = 0.0;               ///< wall time
  /// Balanced accuracy and macro-F1 of each fold and their means: filled by the
  /// evaluations that keep predictions (FlyNN's and kNN's CV; summarize_predictions),
  /// empty otherwise.
  std::vector<double> fold_balanced_accuracy, fold_macro_f1;
  double balanced_accuracy = 0.0, macro_f1 = 0.0;
  /// Log-loss of each fold and their mean, under the `calibration` fitted on all
  /// out-of-fold scores (out_of_fold_log_loss): filled only by FlyNN's CV when asked
  /// (FlyCvEvaluator::evaluate with_log_loss); NaN, empty and Calibration{} otherwise.
  std::vector<double> fold_log_loss;
  double log_loss = std::numeric_limits<double>::quiet_NaN();
  Calibration calibration;
  /// The mean of `metric` over the folds (accuracy: `mean`; log-loss: −log_loss, so that
  /// higher is better for every metric).
  double metric(CvMetric m) const;
};

/// Mean and sample standard deviation of fold accuracies.
CvResult summarize_folds(std::vector<double> fold_accuracy, double seconds);
/// summarize_folds, plus each fold's balanced accuracy and macro-F1 (each list empty or one
/// value per fold) and their means.
CvResult summarize_fold_metrics(std::vector<double> fold_accuracy, std::vector<double> fold_balanced_accuracy,
                                std::vector<double> fold_macro_f1, double seconds);

/// Every metric of each fold from out-of-fold predictions (predicted[r] for row r, made by
/// the model that did not see r's fold): accuracy, balanced accuracy and macro-F1 per fold
/// (0 for a fold without rows) and their means.
CvResult summarize_predictions(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted,
                               const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                               std::size_t n_classes, double seconds);

/// FlyNN's k-fold CV accuracy for one configuration. Every row is hashed once; because
/// counts add up, fold f's training counts are total − counts(fold f), exactly the counts
/// fitting on the other folds would give. (Runs eval::FlyCvEvaluator, which does this in
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

}  // namespace flynn::eval
