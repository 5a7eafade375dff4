// flynn update: learn more rows into an existing model (exact: equals training on all of
// them at once), optionally with new classes appended to its label list.
#include <memory>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/classifier.hpp"
#include "flynn/io/model_file.hpp"
#include "model_edit.hpp"

namespace flynn::cli {

namespace {

struct UpdateOptions {
  std::string model, data, out, labels;
  CommonOptions common;
  DataOptions format;
  ModelMemoryOption model_memory;  ///< --max-model-memory
};

void run_update(const UpdateOptions& o) {
  FlyNN model = io::load_model(o.model, o.common.threads, o.format.max_input_bytes(),
                               o.model_memory.limit(ModelUse::Train));
  const std::size_t classes_before = model.labels().size();
  if (!o.labels.empty()) model.add_classes(LabelSet::parse_list(o.labels));
  ProgressBar bar("learning", !o.common.quiet);
  const std::uint64_t rows = io::learn_file(model, o.data, edit_options(o.format, bar));
  bar.finish();
  nlohmann::json report = {{"command", "update"},
                           {"model", o.model},
                           {"data", o.data},
                           {"rows_added", rows},
                           {"classes_added", model.labels().size() - classes_before}};
  save_and_report(model, o.out.empty() ? o.model : o.out, std::move(report), o.common);
}

void add_update_command(CLI::App& app) {
  auto o = std::make_shared<UpdateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "update", "Learn more labelled rows into a model (exactly as if trained on all rows)");
  cmd->add_option("--model", o->model, "Model file to update")->required();
  cmd->add_option("--data", o->data, "Labelled rows to learn (CSV[.gz], ARFF, IDX[.gz], LIBSVM)")
      ->required();
  cmd->add_option("--out", o->out, "Where to write the updated model (default: --model itself)");
  cmd->add_option("--labels", o->labels,
                  "Extended label list L1,L2,...: the model's labels in order, then new ones");
  o->format.add_to(cmd);
  o->model_memory.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { run_update(*o); });
}

const RegisterCommand registered(12, add_update_command);

}  // namespace

}  // namespace flynn::cli
