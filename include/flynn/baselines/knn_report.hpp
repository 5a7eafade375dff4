#pragma once
// The JSON forms of the kNN baseline's cross-validation results, as `flynn eval --knn` and
// `flynn tune --knn` print them.
#include <nlohmann/json.hpp>

#include "flynn/baselines/knn_cv.hpp"

namespace flynn::experiments {

/// One kNN's best k: {"best_k", "accuracy_mean", "accuracy_sd"}.
nlohmann::json best_k_json(const KnnCvResult& r);

/// The tuned kNN beside `flynn tune`: each scaling's best k (with its scaling), the better
/// one, and the log-loss and ECE of its vote fractions.
nlohmann::json to_json(const TunedKnnComparison& c);

}  // namespace flynn::experiments
