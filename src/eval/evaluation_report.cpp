#include "flynn/eval/evaluation_report.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "flynn/config.hpp"

namespace flynn::eval {

TestFileEvaluation evaluate_test_file(io::RowStream& rows, const FlyNN& model, int threads, ProgressFn progress) {
  io::FilePredictionOptions options;
  options.progress = std::move(progress);
  options.predict.threads = threads;
  options.proba = true;
  const std::size_t L = model.labels().size();
  std::vector<double> known_proba;
  std::vector<std::uint32_t> known_labels;
  TestFileEvaluation e;
  e.prediction = io::predict_file(rows, model, options, [&](const io::PredictedChunk& c) {
    for (std::size_t r = 0; r < c.truth.size(); ++r) {
      if (c.truth[r] == io::kUnknownLabel) continue;
      known_proba.insert(known_proba.end(), c.proba.begin() + r * L, c.proba.begin() + (r + 1) * L);
      known_labels.push_back(c.truth[r]);
    }
  });
  e.known_rows = known_labels.size();
  if (!known_labels.empty()) {
    e.log_loss = log_loss(known_proba, L, known_labels);
    e.ece = expected_calibration_error(known_proba, L, known_labels);
  }
  return e;
}

std::string calibration_text(const CalibrationReport& c) {
  return fmt::format(
      "calibration fitted on out-of-fold scores: t = {:.4g}, prior weight {:g}; held-out (cross-fitted) log-loss "
      "{:.4f}, ECE {:.4f}; default (t = {:g}, prior weight 1): {:.4f}, {:.4f}\n",
      c.fit.calibration.temperature, c.fit.calibration.prior_weight, c.heldout_log_loss, c.heldout_ece,
      Defaults::temperature, c.default_log_loss, c.default_ece);
}

nlohmann::json to_json(const TestFileEvaluation& e) {
  const io::FilePrediction& p = e.prediction;
  nlohmann::json j = {{"rows", p.rows}};
  if (!p.labelled) return j;
  j["accuracy"] = p.accuracy();
  if (e.known_rows) {
    j["log_loss"] = e.log_loss;
    j["ece"] = e.ece;
  }
  if (e.known_rows < p.rows) j["rows_with_unknown_label"] = p.rows - e.known_rows;
  return j;
}

nlohmann::json to_json(const CalibrationReport& c) {
  return {{"temperature", c.fit.calibration.temperature},
          {"prior_weight", c.fit.calibration.prior_weight},
          {"out_of_fold_log_loss", c.fit.log_loss},
          {"out_of_fold_ece", c.fit.ece},
          {"heldout_log_loss", c.heldout_log_loss},
          {"heldout_ece", c.heldout_ece},
          {"default_temperature", Defaults::temperature},
          {"default_log_loss", c.default_log_loss},
          {"default_ece", c.default_ece}};
}

nlohmann::json to_json(const SearchResult& s, const SearchOptions& o) {
  return {{"design", search_design_name(o.design)},
          {"budget", o.budget},
          {"seed", o.seed},
          {"metric", cv_metric_name(o.metric)},
          {"evaluations", s.trace.size()},
          {"planned_evaluations", s.planned_evaluations},
          {"full_evaluations", s.full_evaluations},
          {"cost", s.cost},
          {"capped", s.capped},
          {"time_limit", o.time_limit_seconds},
          {"time_limited", s.time_limited},
          {"seconds", s.seconds}};
}

std::vector<Variant> parse_variant_list(const std::string& comma_separated) {
  std::vector<Variant> variants;
  std::string rest = comma_separated;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    variants.push_back(parse_variant(rest.substr(0, comma)));
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  return variants;
}

}  // namespace flynn::eval
