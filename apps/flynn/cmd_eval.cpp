// flynn eval: stratified k-fold cross-validation accuracy of one configuration.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/evaluation_report.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/baselines/knn_cv.hpp"
#include "flynn/baselines/knn_report.hpp"
#include "flynn/build_config.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::cli {

namespace {

struct EvalOptions {
  std::string data;
  std::uint32_t folds = 10;
  std::uint64_t fold_seed = 0;
  bool knn = false;
  bool calibration = false;
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
  // kNN a user would run: L2-normalised rows and standardised features, k tuned on the same
  // folds; "tuned kNN" is the better of the two.
  experiments::TunedKnnCvResult knn;
  if (o.knn) {
#if FLYNN_HAVE_FAISS
    knn = experiments::cross_validate_tuned_knn(data, folds, o.folds, experiments::default_knn_grid(), o.common.threads);
#else
    throw Error("--knn needs the FAISS kNN baseline: this flynn was built with -DFLYNN_WITH_FAISS=OFF");
#endif
  }
  // Probability calibration on the same folds: the temperature fitted on out-of-fold scores.
  std::optional<experiments::CalibrationReport> cal;
  if (o.calibration) {
    const experiments::FlyCvEvaluator ev(data, folds, o.folds);
    cal = experiments::calibrate_out_of_fold(ev.out_of_fold_scores(config, o.common.threads),
                                             data.classes.size(), config.rho, data.labels, folds, o.folds);
  }
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
      auto knn_json = [](const experiments::KnnCvResult& r) {
        nlohmann::json k = experiments::best_k_json(r);
        k["accuracy_by_k"] = nlohmann::json::object();
        for (std::size_t i = 0; i < r.k_values.size(); ++i)
          k["accuracy_by_k"][std::to_string(r.k_values[i])] = r.per_k[i].mean;
        return k;
      };
      // "knn" stays the L2-normalised kNN (its meaning before standardised kNN existed).
      j["knn"] = knn_json(knn.l2);
      j["knn_standardized"] = knn_json(knn.standardized);
      j["knn_tuned"] = {{"scaling", experiments::knn_scaling_name(knn.best().scaling)},
                        {"best_k", knn.best().k_values[knn.best().best]},
                        {"accuracy_mean", knn.best().per_k[knn.best().best].mean}};
    }
    if (cal) j["calibration"] = experiments::to_json(*cal);
    print_json(j);
    return;
  }
  std::cout << fmt::format("{}: {} rows × {} features, {} classes\n", o.data, data.n_rows,
                           data.n_features, data.classes.size())
            << fmt::format("config: {}\n", config.describe())
            << fmt::format("{}-fold CV accuracy: {:.4f} ± {:.4f} (sd over folds) in {:.2f} s\n",
                           o.folds, r.mean, r.sd, r.seconds);
  if (cal)
    std::cout << fmt::format("probability temperature fitted on out-of-fold scores: {:.4g}; held-out "
                             "(cross-fitted) log-loss {:.4f}, ECE {:.4f}; default t = {:g}: {:.4f}, {:.4f}\n",
                             cal->fit.temperature, cal->heldout_log_loss, cal->heldout_ece,
                             Defaults::temperature, cal->default_log_loss, cal->default_ece);
  if (o.knn)
    for (const experiments::KnnCvResult* r : {&knn.l2, &knn.standardized})
      std::cout << fmt::format("exact kNN ({}), best k = {} of {{1,2,4,...,64}}: {:.4f} ± {:.4f}{}\n",
                               r->scaling == experiments::KnnScaling::Standardize ? "standardised features"
                                                                                 : "L2-normalised rows",
                               r->k_values[r->best], r->per_k[r->best].mean, r->per_k[r->best].sd,
                               r == &knn.best() ? "  <- tuned kNN" : "");
}

void add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Stratified k-fold cross-validation accuracy");
  cmd->add_option("--data", o->data, "Labelled data file")->required();
  cmd->add_option("--folds", o->folds, "Number of folds (default 10)")->check(CLI::Range(2u, 1000000u));
  cmd->add_option("--fold-seed", o->fold_seed, "Seed of the fold assignment (default 0)");
  cmd->add_flag("--calibration", o->calibration,
                "Also fit the probability temperature on out-of-fold scores and report log-loss and ECE");
  cmd->add_flag("--knn", o->knn, "Also report exact kNN (FAISS) on L2-normalised rows and on standardised features, k tuned over {1,2,4,...,64} on the same folds");
  o->hyper.add_to(cmd);
  o->format.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_eval(*o); });
}

const RegisterCommand registered(30, add_eval_command);

}  // namespace

}  // namespace flynn::cli
