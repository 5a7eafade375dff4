// flynn forget: exact unlearning. Removes rows a model learned; the result equals the
// model trained without them. Rows the model cannot contain are refused.
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/io/model_file.hpp"
#include "model_edit.hpp"

namespace flynn::cli {

namespace {

struct ForgetOptions {
  std::string model, data, out;
  CommonOptions common;
  DataOptions format;
  ModelMemoryOption model_memory;  ///< --max-model-memory
};

void run_forget(const ForgetOptions& o) {
  FlyNN model = io::load_model(o.model, o.common.threads, o.format.max_input_bytes(),
                               o.model_memory.limit(ModelUse::Train));
  ProgressBar bar("forgetting", !o.common.quiet);
  const std::uint64_t rows = io::forget_file(model, o.data, edit_options(o.format, bar));
  bar.finish();
  nlohmann::json report = {
      {"command", "forget"}, {"model", o.model}, {"data", o.data}, {"rows_removed", rows}};
  save_and_report(model, o.out.empty() ? o.model : o.out, std::move(report), o.common);
}

void add_forget_command(CLI::App& app) {
  auto o = std::make_shared<ForgetOptions>();
  CLI::App* cmd = app.add_subcommand(
      "forget", "Remove learned rows from a model (exactly as if trained without them)");
  cmd->add_option("--model", o->model, "Model file to remove rows from")->required();
  cmd->add_option("--data", o->data, "The labelled rows to forget, as they were learned")
      ->required();
  cmd->add_option("--out", o->out, "Where to write the model (default: --model itself)");
  o->format.add_to(cmd);
  o->model_memory.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_forget(*o); });
}

const RegisterCommand registered(13, add_forget_command);

}  // namespace

}  // namespace flynn::cli
