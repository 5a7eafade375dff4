// flynn eval: stratified k-fold cross-validation accuracy of one configuration.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/experiments/cross_validation.hpp"
#include "flynn/experiments/knn_cv.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::cli {

namespace {

struct EvalOptions {
  std::string data;
  std::uint32_t folds = 10;
  std::uint64_t fold_seed = 0;
  bool knn = false;
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
};

void run_eval(const EvalOptions& o) {
  const Dataset data = io::load_dataset(o.data, o.format.load_options());
  if (!data.has_labels) throw Error(fmt::format("{}: cross-validation needs labels", o.data));
  data.require_trainable();
  const FlyConfig config =
      o.hyper.params().resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size());
  const auto folds = experiments::stratified_folds(data.labels, data.classes.size(), o.folds, o.fold_seed);
  experiments::CvResult r;
  {
    ProgressBar bar("hashing", !o.common.quiet);
    r = experiments::cross_validate_flynn(data, config, folds, o.folds, o.common.threads, bar.callback());
  }
  // Tuned exact kNN on the same folds, for comparison.
  experiments::KnnCvResult knn;
  if (o.knn) knn = experiments::cross_validate_knn(data, folds, o.folds, experiments::default_knn_grid(), o.common.threads);
  if (o.common.json) {
    nlohmann::json j = {{"command", "eval"},
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
                {"seconds", r.seconds}};
    if (o.knn) {
      j["knn"] = {{"best_k", knn.k_values[knn.best]},
                  {"accuracy_mean", knn.per_k[knn.best].mean},
                  {"accuracy_sd", knn.per_k[knn.best].sd},
                  {"accuracy_by_k", nlohmann::json::object()}};
      for (std::size_t i = 0; i < knn.k_values.size(); ++i)
        j["knn"]["accuracy_by_k"][std::to_string(knn.k_values[i])] = knn.per_k[i].mean;
    }
    print_json(j);
    return;
  }
  std::cout << fmt::format("{}: {} rows × {} features, {} classes\n", o.data, data.n_rows,
                           data.n_features, data.classes.size())
            << fmt::format("config: {}\n", config.describe())
            << fmt::format("{}-fold CV accuracy: {:.4f} ± {:.4f} (sd over folds) in {:.2f} s\n",
                           o.folds, r.mean, r.sd, r.seconds);
  if (o.knn)
    std::cout << fmt::format("exact kNN, best k = {} of {{1,2,4,...,64}}: {:.4f} ± {:.4f}\n",
                             knn.k_values[knn.best], knn.per_k[knn.best].mean, knn.per_k[knn.best].sd);
}

void add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Stratified k-fold cross-validation accuracy");
  cmd->add_option("--data", o->data, "Labelled data file")->required();
  cmd->add_option("--folds", o->folds, "Number of folds (default 10)")->check(CLI::Range(2u, 1000000u));
  cmd->add_option("--fold-seed", o->fold_seed, "Seed of the fold assignment (default 0)");
  cmd->add_flag("--knn", o->knn, "Also report exact kNN (FAISS) tuned over k in {1,2,4,...,64} on the same folds");
  o->hyper.add_to(cmd);
  o->format.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_eval(*o); });
}

const RegisterCommand registered(30, add_eval_command);

}  // namespace

}  // namespace flynn::cli
