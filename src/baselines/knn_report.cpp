#include "flynn/baselines/knn_report.hpp"

namespace flynn::baselines {

nlohmann::json best_k_json(const KnnCvResult& r) {
  return {{"best_k", r.k_values[r.best]},
          {"accuracy_mean", r.per_k[r.best].mean},
          {"accuracy_sd", r.per_k[r.best].sd}};
}

nlohmann::json to_json(const TunedKnnComparison& c) {
  const auto scaled = [](const KnnCvResult& k) {
    nlohmann::json j = best_k_json(k);
    j["scaling"] = knn_scaling_name(k.scaling);
    return j;
  };
  return {{"l2", scaled(c.cv.l2)},
          {"standardized", scaled(c.cv.standardized)},
          {"tuned", scaled(c.cv.best())},
          {"vote_fraction_log_loss", c.log_loss},
          {"vote_fraction_ece", c.ece}};
}

}  // namespace flynn::baselines
