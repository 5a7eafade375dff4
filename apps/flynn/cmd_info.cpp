// flynn info: what a model file holds (eval::model_file_summary); without a model,
// which SIMD target and kernels this machine runs (flynn/simd.hpp).
#include <iostream>
#include <memory>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/eval/model_summary.hpp"

namespace flynn::cli {

namespace {

struct InfoOptions {
  std::string model;
  bool json = false;
  InputLimitOption input_limit;  ///< --max-input-bytes
  ModelMemoryOption model_memory;  ///< --max-model-memory
};

const OptionTable<InfoOptions> kInfoOptions = {
    {"--model", "Model file (without one: this machine's SIMD target and kernels)", &InfoOptions::model},
    {"--json", "Machine-readable output", &InfoOptions::json},
};

void run_info(const InfoOptions& o) {
  if (o.model.empty()) {  // this machine: its SIMD target and kernels
    const eval::Report r = eval::machine_kernels_report();
    if (o.json)
      print_json(r.json);
    else
      std::cout << r.text;
    return;
  }
  // info builds only the count table, so only that is held to --max-model-memory.
  const eval::ModelFileSummary s = eval::model_file_summary(
      o.model, o.input_limit.bytes(), o.model_memory.limit(ModelUse::Inspect));
  if (o.json)
    print_json(s.json);
  else
    std::cout << s.text;
}

void add_info_command(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Show a model file's configuration, classes and counts; without --model, this "
              "machine's SIMD target and kernels");
  bind_options(cmd, kInfoOptions, *o);
  o->input_limit.add_to(cmd);
  o->model_memory.add_to(cmd);
  cmd->callback([o] { run_info(*o); });
}

const RegisterCommand registered(40, add_info_command);

}  // namespace

}  // namespace flynn::cli
