#pragma once
// The JSON forms of the kNN baseline's cross-validation results, as `flynn eval --knn` and
// `flynn tune --knn` print them.
#include <nlohmann/json.hpp>

#include "flynn/baselines/knn_cv.hpp"
#include "flynn/eval/report.hpp"

namespace flynn::baselines {

/// One kNN's best k: {"best_k", "accuracy_mean", "accuracy_sd"}.
nlohmann::json best_k_json(const KnnCvResult& r);

/// The tuned kNN beside `flynn tune`: each scaling's best k (with its scaling), the better
/// one, and the log-loss and ECE of its vote fractions.
nlohmann::json to_json(const TunedKnnComparison& c);

/// The two below are in FAISS builds only (knn_fold_comparison.cpp), as knn_cv.hpp is.
///
/// `flynn eval --knn`: exact kNN on L2-normalised rows and on standardised features, k tuned
/// over default_knn_grid() on the folds given; JSON keys "knn" (L2, as before standardised
/// kNN existed), "knn_standardized" (each with accuracy_by_k) and "knn_tuned" (the better).
eval::FoldComparison tuned_knn_cross_validation();

/// `flynn tune --knn`: compare_tuned_knn on the folds given; JSON key "knn" (to_json above).
eval::FoldComparison tuned_knn_comparison();

}  // namespace flynn::baselines
