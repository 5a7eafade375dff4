// flynn predict: classify the rows of a data file with a saved model
// (eval::predict_and_write).
#include <iostream>
#include <memory>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/eval/predict_and_write.hpp"

namespace flynn::cli {

namespace {

struct PredictCmdOptions {
  eval::PredictFileRequest request;
  CommonOptions common;
  DataOptions format;
  ModelMemoryOption model_memory;  ///< --max-model-memory
};

void run_predict(const PredictCmdOptions& o) {
  eval::PredictFileRun how;
  how.load = o.format.load_options();
  how.max_input_bytes = o.format.max_input_bytes();
  how.model_memory = o.model_memory.limit(ModelUse::Predict);
  how.threads = o.common.threads;
  // Without --out the CSV goes to stdout, unless --json prints the predictions instead.
  const bool csv_on_stdout = o.request.out.empty() && !o.common.json;
  if (csv_on_stdout) how.csv = &std::cout;
  ProgressBar bar("predicting", !o.common.quiet);
  how.progress = bar.callback();
  const eval::Report r = eval::predict_and_write(o.request, how);
  bar.finish();
  // With predictions on stdout, the summary goes to stderr so the CSV stays clean.
  if (csv_on_stdout) std::cerr << r.text;
  else print_report(r, o.common.json);
}

void add_predict_command(CLI::App& app) {
  auto o = std::make_shared<PredictCmdOptions>();
  CLI::App* cmd = app.add_subcommand(
      "predict", "Classify rows with a saved model (the label column is optional)");
  bind_options(cmd, eval::predict_file_fields(), o->request);
  o->format.add_to(cmd);
  o->model_memory.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_predict(*o); });
}

const RegisterCommand registered(20, add_predict_command);

}  // namespace

}  // namespace flynn::cli
