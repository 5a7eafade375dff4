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
#include "flynn/baselines/knn_cv.hpp"
#include "flynn/baselines/knn_report.hpp"
#include "flynn/build_config.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/eval/evaluation_report.hpp"
#include "flynn/eval/tune.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/row_stream.hpp"

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

void run_tune(const TuneCmdOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const io::LoadOptions load = o.format.load_options();
  const Dataset data = io::load_dataset(o.data, load);
  if (!data.has_labels) throw Error(fmt::format("{}: tuning needs a label column", o.data));
  data.require_trainable();
  if (data.n_rows < o.folds)
    throw Error(fmt::format("{}: {} rows, fewer than the {} folds (give --folds)", o.data, data.n_rows, o.folds));
  const LabelSet labels = training_labels(o.labels, data);
  // Open the test file before the long search, so a bad path fails at once; it is read as
  // `predict` will read it, with the model's (= the data's) table.
  std::optional<io::RowStream> test;
  if (!o.test.empty()) {
    io::LoadOptions tl = load;
    tl.expected_features = data.n_features;
    tl.schema = &data.schema;
    tl.require_labels = false;
    test.emplace(o.test, tl);
  }

  experiments::TuneOptions to;
  if (!o.variants.empty()) to.search.space.variants = experiments::parse_variant_list(o.variants);
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
                      {"search", experiments::to_json(s, to.search)},
                      {"temperature", temperature},
                      {"model", o.model},
                      {"model_bytes", model_bytes}};
  if (r.calibration) j["calibration"] = experiments::to_json(*r.calibration);
  if (knn) j["knn"] = experiments::to_json(*knn);
  if (test) j["test"] = experiments::to_json(experiments::evaluate_test_file(*test, model, o.common.threads));
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
