#include "flynn/eval/tune_file.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/config.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/evaluation_report.hpp"
#include "flynn/eval/out_of_fold_report.hpp"
#include "flynn/eval/report_files.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/eval/tune.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/row_stream.hpp"

namespace flynn::eval {

const OptionTable<TuneFileRequest>& tune_file_fields() {
  using R = TuneFileRequest;
  static const OptionTable<R> fields = {
      {"--data", "Labelled training data", &R::data, {}, true},
      {"--model", "Output model file: the best configuration trained on all rows", &R::model, {}, true},
      {"--budget", "Search budget in full-data evaluations (default 60)", &R::budget, {}, false, 1, 100000},
      {"--folds", "Stratified CV folds (default 10)", &R::folds, {}, false, 2, 1000000},
      {"--fold-seed", "Seed of the fold assignment (default 0)", &R::fold_seed},
      {"--time-limit",
       "Finish the whole command within about this many seconds (default: none): the search stops early and "
       "later optional steps (extra candidates, calibration, --knn) are left out, as the output says, so that "
       "the chosen model is still evaluated on all rows, trained and saved in time",
       &R::time_limit, {}, false, 0.0},
      {"--test", "Optional test file: accuracy, log-loss and ECE of the saved model", &R::test},
      {"--knn", "Also report tuned kNN (L2-normalised and standardised, k in {1,...,64}) on the same folds",
       &R::knn},
      {"--variants",
       std::string("Comma-separated variants to search (default: paper,sign,z,zsign,thermo,thermo-sign,"
                   "zsign-q+paper; names: ") +
           variant_names() + ")",
       &R::variants},
      {"--design", "Search design: halving (default), halton, random", &R::design},
      {"--metric",
       "What the search maximises: accuracy (default), balanced_accuracy or macro_f1 (for imbalanced classes), "
       "or log_loss (minimised: the out-of-fold log-loss of the calibrated probabilities, for models whose "
       "probabilities are used)",
       &R::metric},
      {"--class-weight",
       "Class weight of every candidate and of the saved model: none (default), balanced or NAME=W,...",
       &R::class_weight},
      {"--search-seed", "Seed of the search design and subsamples (default 0)", &R::search_seed},
      {"--labels", "Label list L1,L2,... fixing class ids (default: sorted labels of the data)", &R::labels},
      {"--report",
       "Write a classification report of the chosen configuration's out-of-fold answers into this folder: "
       "confusion matrix, per-class precision/recall/F1, reliability diagram, ROC and precision-recall curves for "
       "two classes (report.html, report.json, PNG figures; docs/guide/reports.md)",
       &R::report},
  };
  return fields;
}

namespace {

ProgressFn phase(const TuneFileRun& how, std::string_view name) {
  return how.progress ? how.progress(name) : ProgressFn{};
}

std::string test_line(const nlohmann::json& t) {
  std::string line = fmt::format("test: {} rows", t["rows"].get<std::size_t>());
  if (t.contains("accuracy")) line += fmt::format(", accuracy {:.4f}", t["accuracy"].get<double>());
  if (t.contains("log_loss"))
    line += fmt::format(", log-loss {:.4f}, ECE {:.4f}", t["log_loss"].get<double>(), t["ece"].get<double>());
  return line + "\n";
}

// Trainings on all rows that follow the tuning within its deadline: the model, and the
// test file judged (about its share of the data's bytes).
double fits_after_tuning(const TuneFileRequest& o) {
  if (o.test.empty()) return 1.0;
  std::error_code e1, e2;
  const auto data_bytes = std::filesystem::file_size(o.data, e1), test_bytes = std::filesystem::file_size(o.test, e2);
  if (e1 || e2 || data_bytes == 0) return 2.0;
  return 1.0 + static_cast<double>(test_bytes) / static_cast<double>(data_bytes);
}

// The phases the time limit left out, for the JSON and the text.
void add_skipped(Report& out, const TuneFileRequest& o, const TuneResult& r) {
  if (r.skipped.empty()) return;
  out.json["skipped"] = r.skipped;
  std::string names;
  for (const std::string& s : r.skipped) names += (names.empty() ? "" : ", ") + s;
  out.text += fmt::format("left out to finish within the {:g} s time limit: {}{}\n", o.time_limit, names,
                          r.calibration ? "" : " (no out-of-fold calibration figures)");
}

// The report of the chosen configuration's out-of-fold answers with the saved model's
// calibration, written and named in `j`; returns the line of text that says so.
std::string add_tune_report(nlohmann::json& j, const TuneFileRequest& o, const Dataset& data, const TuneResult& r,
                            const std::vector<std::uint32_t>& folds, const Calibration& calibration) {
  ClassificationReport rep = out_of_fold_report(data, r.config, r.out_of_fold_scores, folds, o.folds,
                                                calibration, fmt::format("flynn tune: {}", o.data));
  rep.facts = {{"data", o.data},
               {"model", o.model},
               {"folds", o.folds},
               {"fold seed", o.fold_seed},
               {"configuration", r.config.describe()},
               {"temperature", calibration.temperature},
               {"prior weight", calibration.prior_weight},
               {"calibration fitted on", calibration_source_name(calibration.source)}};
  Report written;
  attach_report(written, rep, o.report);
  j["report"] = written.json["report"];
  return written.text;
}

// The training rows, after the checks tuning needs.
Dataset load_training_rows(const TuneFileRequest& o, const TuneFileRun& how) {
  Dataset data = io::load_dataset(o.data, how.load);
  if (!data.has_labels) throw Error(fmt::format("{}: tuning needs a label column", o.data));
  data.require_trainable();
  if (data.n_rows < o.folds)
    throw Error(fmt::format("{}: {} rows, fewer than the {} folds (give --folds)", o.data, data.n_rows, o.folds));
  return data;
}

TuneOptions tune_options(const TuneFileRequest& o, const TuneFileRun& how, const LabelSet& labels,
                         std::chrono::steady_clock::time_point t0) {
  TuneOptions to;
  to.search.metric = parse_cv_metric(o.metric);
  to.search.class_weight = ClassWeight::parse(o.class_weight);
  to.search.class_weight.check_classes(labels.names());
  if (!o.variants.empty()) to.search.space.variants = parse_variant_list(o.variants);
  to.search.budget = o.budget;
  to.search.design = parse_search_design(o.design);
  to.search.seed = o.search_seed;
  to.search.threads = how.threads;
  to.search.time_limit_seconds = o.time_limit;
  to.deadline = Deadline(t0, o.time_limit);  // the whole command's
  to.fits_after = fits_after_tuning(o);
  to.keep_out_of_fold_scores = !o.report.empty();
  // A search over a space the user narrowed (--variants) stays in it; otherwise the
  // defaults' own configuration is a candidate too (TuneOptions).
  to.keep_default_unless_beaten = o.variants.empty();
  to.try_pairs = o.variants.empty();  // and the chosen one with second-order filters
  to.try_value_transform = o.variants.empty();  // and with its values transformed
  return to;
}

// What a tuning run chose and saved, for its report.
struct Tuned {
  const Dataset& data;
  const LabelSet& labels;
  const TuneOptions& options;
  const TuneResult& result;
  Calibration calibration;  // the saved model's
  std::uintmax_t model_bytes;
};

nlohmann::json tune_json(const TuneFileRequest& o, const Tuned& t) {
  const TuneResult& r = t.result;
  const SearchOptions& so = t.options.search;
  nlohmann::json j = {{"command", "tune"},
                      {"data", o.data},
                      {"rows", t.data.n_rows},
                      {"features", t.data.n_features},
                      {"classes", t.labels.names()},
                      {"folds", o.folds},
                      {"fold_seed", o.fold_seed},
                      {"config", config_json(r.config)},
                      {"metric", o.metric},
                      {"accuracy", r.cv.mean},
                      {"accuracy_sd", r.cv.sd},
                      {"fold_accuracy", r.cv.fold_accuracy},
                      {"balanced_accuracy", r.cv.balanced_accuracy},
                      {"macro_f1", r.cv.macro_f1},
                      {"search", to_json(r.search, so)},
                      {"temperature", t.calibration.temperature},
                      {"prior_weight", t.calibration.prior_weight},
                      {"model", o.model},
                      {"model_bytes", t.model_bytes}};
  if (so.metric == CvMetric::LogLoss) {
    j["log_loss"] = r.cv.log_loss;
    j["fold_log_loss"] = r.cv.fold_log_loss;
  }
  if (r.default_candidate) {
    j["default_config"] = config_json(r.default_candidate->config);
    j["default_metric"] = r.default_candidate->cv.metric(so.metric);
    j["kept_default"] = r.kept_default;
  }
  // tune's extensions of its choice, in the order tried: <name>_config, <name>_metric,
  // metric_before_<name>, chose_<name>.
  const std::pair<const char*, const TuneResult::ExtensionTrial*> extensions[] = {
      {"value_transform", &r.transform}, {"pairs", &r.pairs}};
  for (const auto& [name, trial] : extensions) {
    if (!trial->candidate) continue;
    j[fmt::format("{}_config", name)] = config_json(trial->candidate->config);
    j[fmt::format("{}_metric", name)] = trial->candidate->cv.metric(so.metric);
    j[fmt::format("metric_before_{}", name)] = trial->metric_before;
    j[fmt::format("chose_{}", name)] = trial->taken;
  }
  if (r.calibration) j["calibration"] = to_json(*r.calibration);
  return j;
}

// The search and the choice, in the text report: what was searched, what was chosen (and
// against the defaults' own configuration and tune's extensions), its CV figures.
std::string choice_text(const TuneFileRequest& o, const Tuned& t) {
  const TuneResult& r = t.result;
  const SearchResult& s = r.search;
  const SearchOptions& so = t.options.search;
  std::string text = fmt::format("{}: {} rows × {} features, {} classes\n", o.data, t.data.n_rows,
                                 t.data.n_features, t.labels.size());
  text += fmt::format("search: {} design, budget {}: {} evaluations ({} on all rows) in {:.1f} s{}\n",
                      search_design_name(so.design), o.budget, s.trace.size(), s.full_evaluations, s.seconds,
                      s.time_limited ? fmt::format(" (stopped by the {:g} s time limit)", o.time_limit) : "");
  text += fmt::format("chosen: {}{}\n", r.config.describe(),
                      !r.kept_default ? ""
                      : r.transform.taken || r.pairs.taken
                          ? " (the defaults' own configuration, which no searched one beat, extended as below)"
                          : " (the defaults' own configuration: no searched one scored higher)");
  if (r.default_candidate && !r.kept_default)
    text += fmt::format("the defaults' own configuration scored {:.4f} by {} on the same folds\n",
                        r.default_candidate->cv.metric(so.metric), o.metric);
  const auto trial_text = [&](const TuneResult::ExtensionTrial& trial, const std::string& what) {
    text += fmt::format("with {}: {:.4f} by {} on the same folds{}\n", what, trial.candidate->cv.metric(so.metric),
                        o.metric, trial.taken ? " (taken)" : " (not taken)");
  };
  if (r.transform.candidate)
    trial_text(r.transform, fmt::format("value_transform = {}",
                                        value_transform_name(r.transform.candidate->config.value_transform)));
  if (r.pairs.candidate)
    trial_text(r.pairs, fmt::format("second-order filters (pairs = {})", r.pairs.candidate->config.pairs));
  text += fmt::format("{}-fold CV accuracy: {:.4f} ± {:.4f} (sd over folds); balanced accuracy {:.4f}, macro-F1 "
                      "{:.4f} (chosen by {})\n",
                      o.folds, r.cv.mean, r.cv.sd, r.cv.balanced_accuracy, r.cv.macro_f1, o.metric);
  if (so.metric == CvMetric::LogLoss)
    text += fmt::format("out-of-fold log-loss of its calibrated probabilities: {:.4f} (t = {:.4g}, prior weight {:g})\n",
                        r.cv.log_loss, r.cv.calibration.temperature, r.cv.calibration.prior_weight);
  if (r.calibration) text += calibration_text(*r.calibration);
  return text;
}

}  // namespace

Report tune_file(const TuneFileRequest& o, const TuneFileRun& how) {
  const auto t0 = std::chrono::steady_clock::now();
  if (o.knn && !how.knn)
    throw Error("--knn needs the FAISS kNN baseline: this flynn was built with -DFLYNN_WITH_FAISS=OFF");
  if (!o.report.empty()) check_report_folder(o.report);
  const Dataset data = load_training_rows(o, how);
  const LabelSet labels = o.labels.empty() ? data.classes : LabelSet::parse_list(o.labels);
  // Open the test file before the long search, so a bad path fails at once; it is read as
  // `predict` will read it, with the model's (= the data's) table.
  std::optional<io::RowStream> test;
  if (!o.test.empty()) {
    io::LoadOptions tl = how.load;
    tl.expected_features = data.n_features;
    tl.schema = &data.schema;
    tl.require_labels = false;
    test.emplace(o.test, tl);
  }

  TuneOptions to = tune_options(o, how, labels, t0);
  std::optional<Report> knn;
  if (o.knn)
    to.comparison = [&](const Dataset& d, const std::vector<std::uint32_t>& f, std::uint32_t k, int threads) {
      knn = how.knn(d, f, k, threads);
    };
  const auto folds = stratified_folds(data.labels, data.classes.size(), o.folds, o.fold_seed);
  const TuneResult r = tune_flynn(data, folds, o.folds, to, phase(how, "tuning"));
  FlyNN model = train_tuned_model(data, labels, r, how.threads, phase(how, "training the chosen configuration"));
  phase(how, "");
  // The model keeps the calibration it fitted on its rows' leave-one-out scores.
  model.set_table_schema(data.schema);
  io::save_model(model, o.model);
  const Tuned tuned{data, labels, to, r, model.calibration(), std::filesystem::file_size(o.model)};

  Report out;
  out.json = tune_json(o, tuned);
  if (knn) out.json.update(knn->json);
  if (test) out.json["test"] = to_json(evaluate_test_file(*test, model, how.threads));
  const std::string report_line = o.report.empty() ? "" : add_tune_report(out.json, o, data, r, folds, model.calibration());
  out.json["seconds"] = detail::seconds_since(t0);
  out.text = choice_text(o, tuned);
  if (knn) out.text += knn->text;
  out.text += fmt::format("model: {} ({}), trained on all {} rows\n", o.model, human_bytes(tuned.model_bytes),
                          data.n_rows);
  if (out.json.contains("test")) out.text += test_line(out.json["test"]);
  out.text += report_line;
  add_skipped(out, o, r);
  out.text += fmt::format("total {:.1f} s\n", out.json["seconds"].get<double>());
  return out;
}

}  // namespace flynn::eval
