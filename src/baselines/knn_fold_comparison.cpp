// The tuned kNN beside `flynn eval` and `flynn tune` (knn_report.hpp's eval::FoldComparison
// makers); FAISS builds only, like knn_cv.cpp which they run.
#include <string>

#include <fmt/format.h>

#include "flynn/baselines/knn_report.hpp"

namespace flynn::baselines {

namespace {

const char* scaling_text(const KnnCvResult& r) {
  return r.scaling == KnnScaling::Standardize ? "standardised features" : "L2-normalised rows";
}

double best_mean(const KnnCvResult& r) { return r.per_k[r.best].mean; }

// kNN tuned for `metric` instead of accuracy: the best (scaling, k) of both sweeps by it.
nlohmann::json tuned_for(const TunedKnnCvResult& knn, eval::CvMetric metric) {
  const KnnCvResult* best = &knn.l2;
  std::size_t best_k = 0;
  for (const KnnCvResult* r : {&knn.l2, &knn.standardized})
    for (std::size_t i = 0; i < r->per_k.size(); ++i)
      if (r->per_k[i].metric(metric) > best->per_k[best_k].metric(metric)) {
        best = r;
        best_k = i;
      }
  return {{"scaling", knn_scaling_name(best->scaling)},
          {"best_k", best->k_values[best_k]},
          {eval::cv_metric_name(metric), best->per_k[best_k].metric(metric)}};
}

std::string tuned_for_text(const nlohmann::json& balanced, const nlohmann::json& f1) {
  return fmt::format("exact kNN tuned for balanced accuracy: {:.4f} ({}, k = {}); for macro-F1: {:.4f} ({}, k = {})\n",
                     balanced["balanced_accuracy"].get<double>(), balanced["scaling"].get<std::string>(),
                     balanced["best_k"].get<std::uint32_t>(), f1["macro_f1"].get<double>(),
                     f1["scaling"].get<std::string>(), f1["best_k"].get<std::uint32_t>());
}

}  // namespace

eval::FoldComparison tuned_knn_cross_validation() {
  return [](const Dataset& data, const std::vector<std::uint32_t>& folds, std::uint32_t k_folds, int threads) {
    const TunedKnnCvResult knn = cross_validate_tuned_knn(data, folds, k_folds, default_knn_grid(), threads);
    const auto by_k = [](const KnnCvResult& r) {
      nlohmann::json k = best_k_json(r);
      k["accuracy_by_k"] = nlohmann::json::object();
      for (std::size_t i = 0; i < r.k_values.size(); ++i) k["accuracy_by_k"][std::to_string(r.k_values[i])] = r.per_k[i].mean;
      return k;
    };
    eval::Report out;
    out.json = {{"knn", by_k(knn.l2)},
                {"knn_standardized", by_k(knn.standardized)},
                {"knn_tuned",
                 {{"scaling", knn_scaling_name(knn.best().scaling)},
                  {"best_k", knn.best().k_values[knn.best().best]},
                  {"accuracy_mean", best_mean(knn.best())}}},
                {"knn_tuned_balanced_accuracy", tuned_for(knn, eval::CvMetric::BalancedAccuracy)},
                {"knn_tuned_macro_f1", tuned_for(knn, eval::CvMetric::MacroF1)}};
    for (const KnnCvResult* r : {&knn.l2, &knn.standardized})
      out.text += fmt::format("exact kNN ({}), best k = {} of {{1,2,4,...,64}}: {:.4f} ± {:.4f}{}\n", scaling_text(*r),
                              r->k_values[r->best], best_mean(*r), r->per_k[r->best].sd,
                              r == &knn.best() ? "  <- tuned kNN" : "");
    out.text += tuned_for_text(out.json["knn_tuned_balanced_accuracy"], out.json["knn_tuned_macro_f1"]);
    return out;
  };
}

eval::FoldComparison tuned_knn_comparison() {
  return [](const Dataset& data, const std::vector<std::uint32_t>& folds, std::uint32_t k_folds, int threads) {
    const TunedKnnComparison c = compare_tuned_knn(data, folds, k_folds, default_knn_grid(), threads);
    const KnnCvResult& b = c.cv.best();
    eval::Report out;
    out.json = {{"knn", to_json(c)}};
    out.json["knn"]["tuned_balanced_accuracy"] = tuned_for(c.cv, eval::CvMetric::BalancedAccuracy);
    out.json["knn"]["tuned_macro_f1"] = tuned_for(c.cv, eval::CvMetric::MacroF1);
    out.text = fmt::format("tuned kNN on the same folds: {:.4f} ({}, k = {}); L2 rows {:.4f}, standardised {:.4f}\n",
                           best_mean(b), scaling_text(b), b.k_values[b.best], best_mean(c.cv.l2),
                           best_mean(c.cv.standardized));
    out.text += fmt::format("tuned kNN's vote fractions: log-loss {:.4f}, ECE {:.4f}\n", c.log_loss, c.ece);
    out.text += tuned_for_text(out.json["knn"]["tuned_balanced_accuracy"], out.json["knn"]["tuned_macro_f1"]);
    return out;
  };
}

}  // namespace flynn::baselines
