#include "flynn/eval/out_of_fold_report.hpp"

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/scoring.hpp"

namespace flynn::eval {

FoldAnswers out_of_fold_answers(const Dataset& data, const FlyConfig& config,
                                const std::vector<double>& scores,
                                const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                const Calibration& calibration) {
  calibration.validate();
  const std::size_t n = data.n_rows, L = data.classes.size();
  if (!data.has_labels || data.labels.size() != n)
    throw Error("out-of-fold answers: the rows need labels");
  if (scores.size() != n * L || fold_of_row.size() != n)
    throw Error(
        fmt::format("out-of-fold answers: {} scores and {} fold ids for {} rows of {} classes",
                    scores.size(), fold_of_row.size(), n, L));
  // Each fold model's priors: its training rows per class (all rows less the fold's), with
  // the class weights the model would derive from them.
  const std::vector<std::uint64_t> all = rows_per_class(data.labels, L);
  std::vector<std::vector<std::uint64_t>> fold_rows(k, all);
  for (std::size_t r = 0; r < n; ++r) {
    if (fold_of_row[r] >= k) throw Error(fmt::format("fold id {} ≥ k = {}", fold_of_row[r], k));
    --fold_rows[fold_of_row[r]][data.labels[r]];
  }
  std::vector<std::vector<double>> priors(k);
  for (std::uint32_t f = 0; f < k; ++f) {
    const std::vector<double> sizes(fold_rows[f].begin(), fold_rows[f].end());
    priors[f] = class_priors(fold_rows[f],
                             config.class_weight.weights_for_sizes(data.classes.names(), sizes));
  }
  FoldAnswers a;
  a.predicted.resize(n);
  a.proba.resize(n * L);
  for (std::size_t r = 0; r < n; ++r) {
    const double* s = scores.data() + r * L;
    double* p = a.proba.data() + r * L;
    flynn::scores_to_probabilities(s, L, config.rho, calibration.temperature, calibration.prior_weight,
                                   priors[fold_of_row[r]].data(), p);
    a.predicted[r] = argmax_class(p, L);  // predict's rule: the first class of highest probability
  }
  return a;
}

ClassificationReport out_of_fold_report(const Dataset& data, const FlyConfig& config,
                                        const std::vector<double>& scores,
                                        const std::vector<std::uint32_t>& fold_of_row,
                                        std::uint32_t k, const Calibration& calibration, std::string title) {
  const FoldAnswers a = out_of_fold_answers(data, config, scores, fold_of_row, k, calibration);
  ClassificationReportBuilder builder(data.classes.names());
  builder.add(data.labels, a.predicted, a.proba);
  return std::move(builder).finish(
      std::move(title),
      fmt::format(
          "Out-of-fold answers of {}-fold stratified cross-validation on {} rows: each row is "
          "answered by "
          "the model trained on the other folds (the class predict returns, and the probabilities "
          "predict_proba returns at temperature {:.4g} and prior weight {:.4g}), so no row is judged by a "
          "model that saw it.",
          k, data.n_rows, calibration.temperature, calibration.prior_weight));
}

}  // namespace flynn::eval
