// flynn tune: search FlyNN's hyper-parameters for one data file by stratified CV, calibrate
// its probabilities, and save the best model trained on every row.
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/baselines/knn_cv.hpp"
#include "flynn/build_config.hpp"
#include "flynn/eval/tune.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"

namespace flynn::cli {

namespace {

struct TuneCmdOptions {
  std::string data, model, test, labels, design = "halving", variants;
  std::uint32_t budget = 60, folds = 10;
  std::uint64_t fold_seed = 0, search_seed = 0;
  double time_limit = 0.0;
  bool knn = false;
  CommonOptions common;
  DataOptions format;
};

nlohmann::json knn_json(const experiments::KnnCvResult& r) {
  return {{"scaling", experiments::knn_scaling_name(r.scaling)},
          {"best_k", r.k_values[r.best]},
          {"accuracy_mean", r.per_k[r.best].mean},
          {"accuracy_sd", r.per_k[r.best].sd}};
}

// Accuracy, log-loss and ECE of the saved model on a labelled test file; labels the model
// does not know count as errors (and are left out of log-loss and ECE, which need a class).
nlohmann::json test_json(const FlyNN& model, const Dataset& test, int threads) {
  PredictOptions po;
  po.threads = threads;
  // Accuracy from predict() (its lowest-class tie rule, as `flynn predict` reports it).
  const std::vector<std::uint32_t> predicted = model.predict(test, po);
  const std::size_t L = model.labels().size();
  const std::vector<double> proba = model.predict_proba(test, po);
  nlohmann::json j = {{"rows", test.n_rows}};
  if (!test.has_labels) return j;
  std::vector<double> known_proba;
  std::vector<std::uint32_t> known_labels;
  std::size_t correct = 0;
  for (std::size_t r = 0; r < test.n_rows; ++r) {
    const long truth = model.labels().find(test.classes.name(test.labels[r]));
    if (truth < 0) continue;
    const double* p = proba.data() + r * L;
    correct += predicted[r] == static_cast<std::uint32_t>(truth);
    known_proba.insert(known_proba.end(), p, p + L);
    known_labels.push_back(static_cast<std::uint32_t>(truth));
  }
  j["accuracy"] = test.n_rows ? static_cast<double>(correct) / test.n_rows : 0.0;
  if (!known_labels.empty()) {
    j["log_loss"] = experiments::log_loss(known_proba, L, known_labels);
    j["ece"] = experiments::expected_calibration_error(known_proba, L, known_labels);
  }
  if (known_labels.size() < test.n_rows) j["rows_with_unknown_label"] = test.n_rows - known_labels.size();
  return j;
}

void run_tune(const TuneCmdOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const io::LoadOptions load = o.format.load_options();
  const Dataset data = io::load_dataset(o.data, load);
  if (!data.has_labels) throw Error(fmt::format("{}: tuning needs a label column", o.data));
  data.require_trainable();
  if (data.n_rows < o.folds)
    throw Error(fmt::format("{}: {} rows, fewer than the {} folds (give --folds)", o.data, data.n_rows, o.folds));
  const LabelSet labels = training_labels(o.labels, data);
  // Load the test file before the long search, so a bad path fails at once.
  std::optional<Dataset> test;
  if (!o.test.empty()) {
    io::LoadOptions tl = load;
    tl.expected_features = data.n_features;
    tl.schema = &data.schema;  // the model's table, as `predict` will read it
    tl.require_labels = false;
    test = io::load_dataset(o.test, tl);
  }

  experiments::TuneOptions to;
  if (!o.variants.empty()) {
    to.search.space.variants.clear();
    std::string rest = o.variants;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      to.search.space.variants.push_back(parse_variant(rest.substr(0, comma)));
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    }
  }
  to.search.budget = o.budget;
  to.search.design = experiments::parse_search_design(o.design);
  to.search.seed = o.search_seed;
  to.search.threads = o.common.threads;
  to.search.time_limit_seconds = o.time_limit;
  std::optional<experiments::TunedKnnComparison> knn;
  if (o.knn) {
#if FLYNN_HAVE_FAISS
    to.comparison = [&knn](const Dataset& d, const std::vector<std::uint32_t>& f, std::uint32_t k, int threads) {
      knn = experiments::compare_tuned_knn(d, f, k, experiments::default_knn_grid(), threads);
    };
#else
    throw Error("--knn needs the FAISS kNN baseline: this flynn was built with -DFLYNN_WITH_FAISS=OFF");
#endif
  }
  const auto folds = experiments::stratified_folds(data.labels, data.classes.size(), o.folds, o.fold_seed);
  experiments::TuneResult r;
  {
    ProgressBar bar("tuning", !o.common.quiet);
    r = experiments::tune_flynn(data, folds, o.folds, to, bar.callback());
  }
  FlyNN model = [&] {
    ProgressBar bar("training the chosen configuration", !o.common.quiet);
    return experiments::train_tuned_model(data, labels, r, o.common.threads, bar.callback());
  }();
  const double temperature = r.temperature();
  model.set_temperature(temperature);
  model.set_table_schema(data.schema);
  io::save_model(model, o.model);
  const auto model_bytes = std::filesystem::file_size(o.model);

  const experiments::SearchResult& s = r.search;
  nlohmann::json j = {{"command", "tune"},
                      {"data", o.data},
                      {"rows", data.n_rows},
                      {"features", data.n_features},
                      {"classes", labels.names()},
                      {"folds", o.folds},
                      {"fold_seed", o.fold_seed},
                      {"config", config_json(r.config)},
                      {"accuracy", r.cv.mean},
                      {"accuracy_sd", r.cv.sd},
                      {"fold_accuracy", r.cv.fold_accuracy},
                      {"search",
                       {{"design", experiments::search_design_name(to.search.design)},
                        {"budget", o.budget},
                        {"seed", o.search_seed},
                        {"evaluations", s.trace.size()},
                        {"planned_evaluations", s.planned_evaluations},
                        {"full_evaluations", s.full_evaluations},
                        {"cost", s.cost},
                        {"capped", s.capped},
                        {"time_limit", o.time_limit},
                        {"time_limited", s.time_limited},
                        {"seconds", s.seconds}}},
                      {"temperature", temperature},
                      {"model", o.model},
                      {"model_bytes", model_bytes}};
  if (r.calibration) {
    const auto& c = *r.calibration;
    j["calibration"] = {{"temperature", c.fit.temperature},
                        {"out_of_fold_log_loss", c.fit.log_loss},
                        {"out_of_fold_ece", c.fit.ece},
                        {"heldout_log_loss", c.heldout_log_loss},
                        {"heldout_ece", c.heldout_ece},
                        {"default_temperature", Defaults::temperature},
                        {"default_log_loss", c.default_log_loss},
                        {"default_ece", c.default_ece}};
  }
  if (knn) {
    j["knn"] = {{"l2", knn_json(knn->cv.l2)},
                {"standardized", knn_json(knn->cv.standardized)},
                {"tuned", knn_json(knn->cv.best())},
                {"vote_fraction_log_loss", knn->log_loss},
                {"vote_fraction_ece", knn->ece}};
  }
  if (test) j["test"] = test_json(model, *test, o.common.threads);
  j["seconds"] = seconds_since(t0);
  if (o.common.json) {
    print_json(j);
    return;
  }
  std::cout << fmt::format("{}: {} rows × {} features, {} classes\n", o.data, data.n_rows, data.n_features,
                           labels.size())
            << fmt::format("search: {} design, budget {}: {} evaluations ({} on all rows) in {:.1f} s{}\n",
                           experiments::search_design_name(to.search.design), o.budget, s.trace.size(),
                           s.full_evaluations, s.seconds,
                           s.time_limited ? fmt::format(" (stopped by the {:g} s time limit)", o.time_limit) : "")
            << fmt::format("chosen: {}\n", r.config.describe())
            << fmt::format("{}-fold CV accuracy: {:.4f} ± {:.4f} (sd over folds)\n", o.folds, r.cv.mean, r.cv.sd);
  if (r.calibration) {
    const auto& c = *r.calibration;
    std::cout << fmt::format(
        "probability temperature: {:.4g}; held-out (cross-fitted) log-loss {:.4f}, ECE {:.4f}; "
        "default t = {:g}: {:.4f}, {:.4f}\n",
        c.fit.temperature, c.heldout_log_loss, c.heldout_ece, Defaults::temperature,
        c.default_log_loss, c.default_ece);
  }
  if (knn) {
    const experiments::KnnCvResult& b = knn->cv.best();
    std::cout << fmt::format("tuned kNN on the same folds: {:.4f} ({}, k = {}); L2 rows {:.4f}, standardised {:.4f}\n",
                             b.per_k[b.best].mean,
                             b.scaling == experiments::KnnScaling::Standardize ? "standardised features"
                                                                               : "L2-normalised rows",
                             b.k_values[b.best], knn->cv.l2.per_k[knn->cv.l2.best].mean,
                             knn->cv.standardized.per_k[knn->cv.standardized.best].mean);
    std::cout << fmt::format("tuned kNN's vote fractions: log-loss {:.4f}, ECE {:.4f}\n", knn->log_loss, knn->ece);
  }
  std::cout << fmt::format("model: {} ({}), trained on all {} rows\n", o.model, human_bytes(model_bytes), data.n_rows);
  if (j.contains("test")) {
    const auto& t = j["test"];
    std::cout << fmt::format("test: {} rows", t["rows"].get<std::size_t>());
    if (t.contains("accuracy")) std::cout << fmt::format(", accuracy {:.4f}", t["accuracy"].get<double>());
    if (t.contains("log_loss"))
      std::cout << fmt::format(", log-loss {:.4f}, ECE {:.4f}", t["log_loss"].get<double>(), t["ece"].get<double>());
    std::cout << "\n";
  }
  std::cout << fmt::format("total {:.1f} s\n", j["seconds"].get<double>());
}

void add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCmdOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Search hyper-parameters by stratified CV, calibrate probabilities, save the best model");
  cmd->add_option("--data", o->data, "Labelled training data")->required();
  cmd->add_option("--model", o->model, "Output model file: the best configuration trained on all rows")->required();
  cmd->add_option("--budget", o->budget, "Search budget in full-data evaluations (default 60)")
      ->check(CLI::Range(1u, 100000u));
  cmd->add_option("--folds", o->folds, "Stratified CV folds (default 10)")->check(CLI::Range(2u, 1000000u));
  cmd->add_option("--fold-seed", o->fold_seed, "Seed of the fold assignment (default 0)");
  cmd->add_option("--time-limit", o->time_limit,
                  "Stop starting new search evaluations after this many seconds (default: none); the "
                  "best so far is still evaluated on all rows and trained")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--test", o->test, "Optional test file: accuracy, log-loss and ECE of the saved model");
  cmd->add_flag("--knn", o->knn,
                "Also report tuned kNN (L2-normalised and standardised, k in {1,...,64}) on the same folds");
  cmd->add_option("--variants", o->variants,
                  std::string("Comma-separated variants to search (default: paper,sign,z,zsign,thermo,thermo-sign,zsign-q+paper; "
                              "names: ") + variant_names() + ")");
  cmd->add_option("--design", o->design, "Search design: halving (default), halton, random");
  cmd->add_option("--search-seed", o->search_seed, "Seed of the search design and subsamples (default 0)");
  cmd->add_option("--labels", o->labels,
                  "Label list L1,L2,... fixing class ids (default: sorted labels of the data)");
  o->format.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_tune(*o); });
}

const RegisterCommand registered(35, add_tune_command);

}  // namespace

}  // namespace flynn::cli
