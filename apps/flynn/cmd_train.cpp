// flynn train: learn a model from a data file and save it (eval::train_and_save).
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/eval/train_and_save.hpp"

namespace flynn::cli {

namespace {

struct TrainOptions {
  eval::TrainFileRequest request;
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
  FeatureStatsOption feature_stats;
};

void run_train(const TrainOptions& o) {
  io::FileTrainingOptions training;
  training.load = o.format.load_options();
  // Read before the data, so that a bad statistics file stops the command at once.
  training.public_stats = o.feature_stats.load(o.format.max_input_bytes());
  training.public_stats_source = fmt::format("--feature-stats {}", o.feature_stats.path);
  training.hyper = o.hyper.params();
  training.threads = o.common.threads;
  std::optional<ProgressBar> bar;
  training.progress = phase_progress(bar, o.common.quiet);
  print_report(eval::train_and_save(o.request, std::move(training)), o.common.json);
}

void add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand("train", "Train a FlyNN model on a labelled data file");
  bind_options(cmd, eval::train_file_fields(), o->request);
  o->hyper.add_to(cmd);
  o->format.add_to(cmd);
  o->feature_stats.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_train(*o); });
}

const RegisterCommand registered(10, add_train_command);

}  // namespace

}  // namespace flynn::cli
