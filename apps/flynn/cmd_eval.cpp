// flynn eval: stratified k-fold cross-validation accuracy of one configuration
// (eval::cross_validate_file).
#include <memory>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/build_config.hpp"
#include "flynn/eval/cross_validate_file.hpp"
#if FLYNN_HAVE_FAISS
#include "flynn/baselines/knn_report.hpp"
#endif

namespace flynn::cli {

namespace {

struct EvalOptions {
  eval::CrossValidateFileRequest request;
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
};

void run_eval(const EvalOptions& o) {
  eval::CrossValidateFileRun how;
  how.load = o.format.load_options();
  how.hyper = o.hyper.params();
  how.threads = o.common.threads;
  ProgressBar bar("hashing", !o.common.quiet);
  how.progress = bar.callback();
#if FLYNN_HAVE_FAISS
  how.knn = baselines::tuned_knn_cross_validation();
#endif
  const eval::Report r = eval::cross_validate_file(o.request, how);
  bar.finish();
  print_report(r, o.common.json);
}

void add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Stratified k-fold cross-validation accuracy");
  bind_options(cmd, eval::cross_validate_file_fields(), o->request);
  o->hyper.add_to(cmd);
  o->format.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_eval(*o); });
}

const RegisterCommand registered(30, add_eval_command);

}  // namespace

}  // namespace flynn::cli
