#include "tune_bindings.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "flynn/config.hpp"
#include "flynn/eval/auto_config.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/tune.hpp"
#include "config_dict.hpp"
#include "model_handle.hpp"
#include "numpy_rows.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

/// Runs what `flynn tune` runs on stratified folds of the rows: tune_flynn (the search and
/// the calibration figures on out-of-fold scores; no kNN) and, with `refit`, the chosen
/// configuration trained on all rows (train_tuned_model, as the CLI's model, with the
/// calibration it fits on its rows' leave-one-out scores). Returns the trace, the choice, the calibration
/// and the model ("model", without refit None) as Python values.
py::dict tune(const py::array& X, const LabelIds& y, std::vector<std::string> labels,
              std::uint32_t budget, std::uint32_t folds, std::uint64_t fold_seed,
              std::uint64_t search_seed, std::uint64_t fly_seed, double time_limit,
              bool refit, int threads, const std::string& metric, const std::string& class_weight) {
  const NumpyRows rows(X);
  if (y.ndim() != 1 || static_cast<std::size_t>(y.shape(0)) != rows.n_rows())
    throw std::invalid_argument("expected one class id per row");
  const LabelSet classes(std::move(labels));
  eval::TuneOptions options;
  options.search.budget = budget;
  options.search.seed = search_seed;
  options.search.fly_seed = fly_seed;
  options.search.time_limit_seconds = time_limit;
  // The whole call, refit included, within the limit (as `flynn tune --time-limit`).
  options.deadline = eval::Deadline(std::chrono::steady_clock::now(), time_limit);
  options.fits_after = refit ? 1.0 : 0.0;
  options.search.threads = threads;
  options.search.metric = eval::parse_cv_metric(metric);
  options.search.class_weight = ClassWeight::parse(class_weight);
  options.search.class_weight.check_classes(classes.names());
  options.keep_default_unless_beaten = true;  // as `flynn tune`: never less than the defaults
  options.try_pairs = true;                   // and the chosen configuration with pairs
  options.try_value_transform = true;         // and with its values transformed (before pairs)
  std::optional<eval::TuneResult> result;
  std::optional<FlyNN> model;
  {
    py::gil_scoped_release nogil;
    const Dataset data = labelled_dataset(rows, y.data(), classes);
    const std::vector<std::uint32_t> fold_of_row =
        eval::stratified_folds(data.labels, classes.size(), folds, fold_seed);
    result.emplace(eval::tune_flynn(data, fold_of_row, folds, options));
    if (refit) model.emplace(eval::train_tuned_model(data, classes, *result, threads));
  }
  const eval::SearchResult& s = result->search;
  py::list trace;
  for (const eval::SearchEvaluation& e : s.trace) {
    py::dict t;
    t["candidate"] = e.candidate;
    t["rung"] = e.rung;
    t["rows"] = e.rows;
    t["params"] = config_params(e.config);
    t["requested_m"] = e.requested_m;
    t["cap_reason"] = e.cap_reason;
    t["gamma_accuracy"] = e.gamma_accuracy;
    t["accuracy"] = e.accuracy;
    t["seconds"] = e.seconds;
    trace.append(t);
  }
  py::dict out;
  out["trace"] = trace;
  out["gammas"] = options.search.space.gammas;
  out["best_index"] = s.best;
  out["best_params"] = config_params(result->config);
  out["kept_default"] = result->kept_default;
  out["chose_pairs"] = result->pairs.taken;
  out["chose_value_transform"] = result->transform.taken;
  const eval::CvResult& cv = result->cv;
  out["best_fold_accuracy"] = cv.fold_accuracy;
  out["best_mean"] = cv.mean;
  // The metric the search maximised, per fold and as its mean (TuneSearch.best_score_).
  out["scoring"] = metric;
  out["best_score"] = cv.metric(options.search.metric);
  switch (options.search.metric) {
    case eval::CvMetric::Accuracy:
      out["best_fold_scores"] = cv.fold_accuracy;
      break;
    case eval::CvMetric::BalancedAccuracy:
      out["best_fold_scores"] = cv.fold_balanced_accuracy;
      break;
    case eval::CvMetric::MacroF1:
      out["best_fold_scores"] = cv.fold_macro_f1;
      break;
    case eval::CvMetric::LogLoss: {  // scored as scikit-learn's neg_log_loss: higher is better
      std::vector<double> neg(cv.fold_log_loss.size());
      for (std::size_t f = 0; f < neg.size(); ++f) neg[f] = -cv.fold_log_loss[f];
      out["best_fold_scores"] = neg;
      break;
    }
  }
  if (options.search.metric == eval::CvMetric::LogLoss) out["best_log_loss"] = cv.log_loss;
  out["best_balanced_accuracy"] = cv.balanced_accuracy;
  out["best_macro_f1"] = cv.macro_f1;
  out["full_evaluations"] = s.full_evaluations;
  out["cost"] = s.cost;
  out["time_limited"] = s.time_limited;
  out["skipped"] = result->skipped;
  out["seconds"] = result->seconds;
  // The refitted model's own calibration (fitted on its rows' leave-one-out scores), else
  // the fit on the out-of-fold scores.
  const Calibration chosen = model              ? model->calibration()
                             : result->calibration ? result->calibration->fit.calibration
                                                   : Calibration{};
  out["temperature"] = chosen.temperature;
  out["prior_weight"] = chosen.prior_weight;
  if (result->calibration) {
    const eval::CalibrationReport& c = *result->calibration;
    py::dict cal;
    cal["temperature"] = c.fit.calibration.temperature;
    cal["prior_weight"] = c.fit.calibration.prior_weight;
    cal["out_of_fold_log_loss"] = c.fit.log_loss;
    cal["out_of_fold_ece"] = c.fit.ece;
    cal["heldout_log_loss"] = c.heldout_log_loss;
    cal["heldout_ece"] = c.heldout_ece;
    cal["default_temperature"] = Defaults::temperature;
    cal["default_log_loss"] = c.default_log_loss;
    cal["default_ece"] = c.default_ece;
    out["calibration"] = cal;
  } else {
    out["calibration"] = py::none();
  }
  if (model) {
    out["model"] = ModelHandle(std::move(*model));
  } else {
    out["model"] = py::none();
  }
  return out;
}

/// Runs what `flynn train --auto` runs before training (choose_auto_config) on the rows, and
/// returns the chosen hyper-parameters ("hyper", every field given) and what the choice saw.
py::dict auto_config(const py::array& X, const LabelIds& y, std::vector<std::string> labels,
                     const HyperParams& hyper, int threads) {
  const NumpyRows rows(X);
  if (y.ndim() != 1 || static_cast<std::size_t>(y.shape(0)) != rows.n_rows())
    throw std::invalid_argument("expected one class id per row");
  const LabelSet classes(std::move(labels));
  std::optional<eval::AutoChoice> choice;
  {
    py::gil_scoped_release nogil;
    const Dataset data = labelled_dataset(rows, y.data(), classes);
    eval::AutoOptions options;
    options.threads = threads;
    options.metric = eval::auto_metric(hyper);
    choice.emplace(eval::choose_auto_config(data, hyper, options));
  }
  py::dict out;
  out["hyper"] = eval::hyper_params_of(choice->config);
  out["chosen"] = choice->candidates[choice->chosen].name;
  out["gamma"] = choice->config.gamma;
  out["rows"] = choice->rows;
  out["margin"] = choice->margin;
  out["default_score"] = choice->default_metric;
  out["chosen_score"] = choice->chosen_metric;
  py::dict cv;
  for (std::size_t c = 0; c < choice->cv.size(); ++c) {
    std::vector<double> per_gamma;
    for (const eval::CvResult& r : choice->cv[c]) per_gamma.push_back(r.metric(choice->metric));
    cv[py::str(choice->candidates[c].name)] = per_gamma;
  }
  out["metric"] = eval::cv_metric_name(choice->metric);
  out["cv"] = cv;
  out["gammas"] = choice->gammas;
  return out;
}

}  // namespace

void bind_tune(py::module_& m) {
  m.def("auto_config", &auto_config, py::arg("X"), py::arg("y"), py::arg("labels"), py::arg("hyper"),
        py::arg("threads"));
  m.def("tune", &tune, py::arg("X"), py::arg("y"), py::arg("labels"), py::arg("budget"),
        py::arg("folds"), py::arg("fold_seed"), py::arg("search_seed"), py::arg("fly_seed"),
        py::arg("time_limit"), py::arg("refit"), py::arg("threads"), py::arg("metric") = "accuracy",
        py::arg("class_weight") = "none");
}

}  // namespace flynn::python
