#include "flynn/eval/cross_validate_file.hpp"

#include <optional>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/eval/auto_config.hpp"
#include "flynn/eval/auto_report.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/evaluation_report.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/eval/out_of_fold_report.hpp"
#include "flynn/eval/report_files.hpp"
#include "flynn/eval/study_io.hpp"

namespace flynn::eval {

const OptionTable<CrossValidateFileRequest>& cross_validate_file_fields() {
  using R = CrossValidateFileRequest;
  static const OptionTable<R> fields = {
      {"--data", "Labelled data file", &R::data, {}, true},
      {"--folds", "Number of folds (default 10)", &R::folds, {}, false, 2, 1000000},
      {"--fold-seed", "Seed of the fold assignment (default 0)", &R::fold_seed},
      {"--calibration",
       "Also fit the probability temperature on out-of-fold scores and report log-loss and ECE",
       &R::calibration},
      {"--knn",
       "Also report exact kNN (FAISS) on L2-normalised rows and on standardised features, k tuned over "
       "{1,2,4,...,64} on the same folds",
       &R::knn},
      {"--auto",
       "Cross-validate train --auto: in each fold the configuration is chosen among a few candidates "
       "by CV on that fold's training rows alone",
       &R::auto_config},
      {"--report",
       "Write a classification report of the out-of-fold answers into this folder: confusion matrix, "
       "per-class precision/recall/F1, reliability diagram, ROC and precision-recall curves for two classes "
       "(report.html, report.json, PNG figures; docs/guide/reports.md)",
       &R::report},
      {"--auto-study", "With --auto: score every candidate on the outer folds (research/auto/auto_study.py)", &R::auto_study, {},
       false, {}, {}, true},
  };
  return fields;
}

namespace {

// The report of the out-of-fold answers, with what was cross-validated. Their probabilities
// take the calibration the training rule (flynn::choose_calibration) chooses on these
// out-of-fold scores, as a model `flynn train` makes fits one on its rows.
ClassificationReport cv_report(const CrossValidateFileRequest& o, const Dataset& data, const FlyConfig& config,
                               const std::vector<double>& scores, const std::vector<std::uint32_t>& folds) {
  const Calibration calibration =
      fit_calibration(scores, data.classes.size(), config.rho, data.labels,
                      class_weights_of_rows(config, data.classes, data.labels))
          .calibration;
  ClassificationReport r = out_of_fold_report(data, config, scores, folds, o.folds, calibration,
                                              fmt::format("flynn eval: {}", o.data));
  r.facts = {{"data", o.data},
             {"features", data.n_features},
             {"folds", o.folds},
             {"fold seed", o.fold_seed},
             {"configuration", config.describe()}};
  return r;
}

}  // namespace

Report cross_validate_file(const CrossValidateFileRequest& o, const CrossValidateFileRun& how) {
  if (o.knn && !how.knn)
    throw Error("--knn needs the FAISS kNN baseline: this flynn was built with -DFLYNN_WITH_FAISS=OFF");
  const Dataset data = io::load_dataset(o.data, how.load);
  if (!data.has_labels) throw Error(fmt::format("{}: cross-validation needs labels", o.data));
  data.require_trainable();
  const FlyConfig config = how.hyper.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size());
  config.class_weight.check_classes(data.classes.names());
  const auto folds = stratified_folds(data.labels, data.classes.size(), o.folds, o.fold_seed);
  if (o.auto_study && !o.auto_config) throw Error("--auto-study goes with --auto");
  if (o.auto_config && o.calibration) throw Error("--calibration cannot be combined with --auto");
  if (o.auto_config && !o.report.empty())
    throw Error("--report cannot be combined with --auto (each fold chooses its own configuration)");
  if (!o.report.empty()) check_report_folder(o.report);
  std::optional<AutoCvResult> nested;
  if (o.auto_config) {
    AutoOptions auto_options;
    auto_options.threads = how.threads;
    auto_options.metric = auto_metric(how.hyper);
    nested = cross_validate_auto(data, how.hyper, folds, o.folds, auto_options, o.auto_study, how.progress);
  }
  const CvResult r = nested ? nested->cv : cross_validate_flynn(data, config, folds, o.folds, how.threads, how.progress);
  std::optional<Report> knn;
  if (o.knn) knn = how.knn(data, folds, o.folds, how.threads);
  // Out-of-fold scores of the same folds, for the calibration and the report.
  std::vector<double> scores;
  if (o.calibration || !o.report.empty()) scores = FlyCvEvaluator(data, folds, o.folds).out_of_fold_scores(config, how.threads);
  std::optional<CalibrationReport> cal;
  if (o.calibration)
    cal = calibrate_out_of_fold(scores, data.classes.size(), config.rho, data.labels, folds, o.folds,
                                class_weights_of_rows(config, data.classes, data.labels));

  Report out;
  out.json = {{"command", "eval"},
              {"data", o.data},
              {"rows", data.n_rows},
              {"features", data.n_features},
              {"classes", data.classes.size()},
              {"folds", o.folds},
              {"fold_seed", o.fold_seed},
              {"config", config_json(config)},
              {"accuracy_mean", r.mean},
              {"accuracy_sd", r.sd},
              {"fold_accuracy", r.fold_accuracy},
              {"balanced_accuracy", r.balanced_accuracy},
              {"macro_f1", r.macro_f1},
              {"fold_balanced_accuracy", r.fold_balanced_accuracy},
              {"fold_macro_f1", r.fold_macro_f1},
              {"seconds", r.seconds}};
  if (knn) out.json.update(knn->json);
  if (nested) out.json["auto"] = auto_cv_json(*nested);
  if (cal) out.json["calibration"] = to_json(*cal);
  out.text = fmt::format("{}: {} rows × {} features, {} classes\n", o.data, data.n_rows, data.n_features,
                         data.classes.size());
  if (nested) {
    out.text += auto_cv_text(*nested);
  } else {
    out.text += fmt::format("config: {}\n", config.describe());
  }
  out.text += fmt::format("{}-fold CV accuracy: {:.4f} ± {:.4f} (sd over folds) in {:.2f} s\n", o.folds, r.mean,
                          r.sd, r.seconds);
  out.text += fmt::format("balanced accuracy {:.4f}, macro-F1 {:.4f} (means over folds)\n", r.balanced_accuracy,
                          r.macro_f1);
  if (cal) out.text += calibration_text(*cal);
  if (knn) out.text += knn->text;
  if (!o.report.empty()) attach_report(out, cv_report(o, data, config, scores, folds), o.report);
  return out;
}

}  // namespace flynn::eval
