// flynn tune: search FlyNN's hyper-parameters for one data file by stratified CV, calibrate
// its probabilities, and save the best model trained on every row (eval::tune_file).
#include <memory>
#include <optional>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/build_config.hpp"
#include "flynn/eval/tune_file.hpp"
#if FLYNN_HAVE_FAISS
#include "flynn/baselines/knn_report.hpp"
#endif

namespace flynn::cli {

namespace {

struct TuneCmdOptions {
  eval::TuneFileRequest request;
  CommonOptions common;
  DataOptions format;
};

void run_tune(const TuneCmdOptions& o) {
  eval::TuneFileRun how;
  how.load = o.format.load_options();
  how.threads = o.common.threads;
  std::optional<ProgressBar> bar;
  how.progress = phase_progress(bar, o.common.quiet);
#if FLYNN_HAVE_FAISS
  how.knn = baselines::tuned_knn_comparison();
#endif
  print_report(eval::tune_file(o.request, how), o.common.json);
}

void add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCmdOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Search hyper-parameters by stratified CV, calibrate probabilities, save the best model");
  bind_options(cmd, eval::tune_file_fields(), o->request);
  o->format.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_tune(*o); });
}

const RegisterCommand registered(35, add_tune_command);

}  // namespace

}  // namespace flynn::cli
