#pragma once
// Cross-validated kNNC / 1NNC (the paper's baselines) on the shared folds, and "tuned kNN":
// the better of kNN on L2-normalised rows and kNN on standardised features, k tuned on the
// same folds, the comparator a user would actually run.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/baselines/knn.hpp"

namespace flynn::baselines {

/// k ∈ {1, 2, 4, …, 64}: the paper's grid for kNNC (1NNC is its k = 1).
std::vector<std::uint32_t> default_knn_grid();

/// Cross-validated accuracy of kNN for every k of a grid.
struct KnnCvResult {
  std::vector<std::uint32_t> k_values;  ///< the grid, ascending
  std::vector<eval::CvResult> per_k;          ///< per_k[i] for k_values[i]
  std::size_t best = 0;                 ///< index of the best mean accuracy (smallest k on ties)
  double seconds = 0.0;                 ///< wall time of the whole sweep
  KnnScaling scaling = KnnScaling::L2Normalize;  ///< how rows were scaled
  /// Out-of-fold vote fractions (knn_vote_fractions) of the best k: n × L row-major, row r
  /// from the fold where r was a test row. kNN's probabilities, for calibration reports.
  std::vector<double> best_vote_fractions;
};

/// For each fold: an exact FAISS index (ExactKnnIndex with `scaling`; Standardize takes the
/// statistics of that fold's training rows) over the training rows, ONE search of the test rows with k = max(grid), then a
/// majority vote (knn_vote's tie rule: the class of the nearest tied member wins) for
/// every k of the grid from the same neighbour lists. k larger than a fold's training set
/// is capped to its size. `threads` bounds FAISS's OpenMP threads (0 = all cores).
/// Throws flynn::Error when the data is unlabelled, the grid is empty or contains 0.
KnnCvResult cross_validate_knn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                               std::uint32_t k_folds,
                               const std::vector<std::uint32_t>& k_values = default_knn_grid(),
                               int threads = 0, KnnScaling scaling = KnnScaling::L2Normalize);

/// kNN under both scalings on the same folds; "tuned kNN" is the better of the two.
struct TunedKnnCvResult {
  KnnCvResult l2;            ///< L2-normalised rows (the paper's kNNC)
  KnnCvResult standardized;  ///< standardised features
  /// The better by best-k mean CV accuracy (L2 on ties, the paper's protocol).
  const KnnCvResult& best() const {
    return standardized.per_k[standardized.best].mean > l2.per_k[l2.best].mean ? standardized : l2;
  }
};

/// Runs cross_validate_knn with each scaling. Throws like cross_validate_knn.
TunedKnnCvResult cross_validate_tuned_knn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                          std::uint32_t k_folds,
                                          const std::vector<std::uint32_t>& k_values = default_knn_grid(),
                                          int threads = 0);

/// Tuned kNN as the comparison of `flynn tune --knn` (TuneOptions::comparison): its CV under
/// both scalings and the out-of-fold vote fractions of the better one's best k judged like
/// FlyNN's probabilities.
struct TunedKnnComparison {
  TunedKnnCvResult cv;
  double log_loss = 0.0;  ///< of best().best_vote_fractions
  double ece = 0.0;       ///< expected calibration error of the same
};

/// cross_validate_tuned_knn, then eval::log_loss and eval::expected_calibration_error (calibration.hpp)
/// of the better scaling's vote fractions. Throws like cross_validate_knn.
TunedKnnComparison compare_tuned_knn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                     std::uint32_t k_folds,
                                     const std::vector<std::uint32_t>& k_values = default_knn_grid(),
                                     int threads = 0);

}  // namespace flynn::baselines
