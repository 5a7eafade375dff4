// flynn merge: add up models trained on different rows with the same configuration and
// label list; the result equals one model trained on all of their rows.
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"
#include "model_edit.hpp"

namespace flynn::cli {

namespace {

struct MergeOptions {
  std::vector<std::string> models;
  std::string out;
  CommonOptions common;
  InputLimitOption input_limit;  ///< --max-input-bytes for the models read
  ModelMemoryOption model_memory;  ///< --max-model-memory, for each model read
};

void run_merge(const MergeOptions& o) {
  if (o.models.size() < 2)
    throw Error(fmt::format("merge needs at least two models, got {}", o.models.size()));
  // Merging builds each model as loading for prediction does (its hasher), then adds counts.
  const io::ModelMemoryLimit memory = o.model_memory.limit(ModelUse::Predict);
  FlyNN merged = io::load_model(o.models[0], o.common.threads, o.input_limit.bytes(), memory);
  for (std::size_t i = 1; i < o.models.size(); ++i) {
    const FlyNN other =
        io::load_model(o.models[i], o.common.threads, o.input_limit.bytes(), memory);
    try {
      merged.merge(other);
    } catch (const Error& e) {
      throw Error(fmt::format("{} and {}: {}", o.models[0], o.models[i], e.what()));
    }
  }
  nlohmann::json report = {{"command", "merge"}, {"models", o.models}};
  save_and_report(merged, o.out, std::move(report), o.common);
}

void add_merge_command(CLI::App& app) {
  auto o = std::make_shared<MergeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Add up models with equal configurations and label lists (exact)");
  cmd->add_option("models", o->models, "Model files A B ... (at least two)")->required();
  cmd->add_option("--out", o->out, "Merged model file (written atomically)")->required();
  o->common.add_to(cmd);
  o->input_limit.add_to(cmd);
  o->model_memory.add_to(cmd);
  cmd->callback([o] { run_merge(*o); });
}

const RegisterCommand registered(14, add_merge_command);

}  // namespace

}  // namespace flynn::cli
