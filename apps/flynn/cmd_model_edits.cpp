// flynn update | forget | merge: exact edits of saved models (flynn/eval/model_file_edits.hpp):
//   update  learn more rows (equals training on all of them), optionally with new classes
//   forget  remove learned rows (equals training without them)
//   merge   add up models of one configuration and label list (equals training on all rows)
#include <memory>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/eval/model_file_edits.hpp"

namespace flynn::cli {

namespace {

using namespace flynn::eval;

template <class Request>
using EditFn = Report (*)(const Request&, const ModelEditRun&);

// One edit command: the request's table, the data flags when it reads rows, the limits of
// the models read, and a progress bar named `progress`.
template <class Request>
void add_edit(CLI::App& app, const char* name, const char* help, const OptionTable<Request>& fields,
              EditFn<Request> edit, const char* progress) {
  struct Options {
    Request request;
    CommonOptions common;
    DataOptions format;  ///< with --max-input-bytes, which also bounds the models read
    ModelMemoryOption model_memory;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(name, help);
  bind_options(cmd, fields, o->request);
  if (progress) o->format.add_to(cmd);
  else o->format.input_limit.add_to(cmd);
  o->model_memory.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o, edit, progress] {
    ModelEditRun how;
    if (progress) how.load = o->format.load_options();
    how.max_input_bytes = o->format.max_input_bytes();
    how.model_memory_bytes = o->model_memory.limit(ModelUse::Predict).bytes;
    how.threads = o->common.threads;
    ProgressBar bar(progress ? progress : "", progress && !o->common.quiet);
    how.progress = bar.callback();
    const Report r = edit(o->request, how);
    bar.finish();
    print_report(r, o->common.json);
  });
}

void add_model_edit_commands(CLI::App& app) {
  add_edit(app, "update", "Learn more labelled rows into a model (exactly as if trained on all rows)",
           update_fields(), &update_model_file, "learning");
  add_edit(app, "forget", "Remove learned rows from a model (exactly as if trained without them)", forget_fields(),
           &forget_model_file, "forgetting");
  add_edit(app, "merge", "Add up models with equal configurations and label lists (exact)", merge_fields(),
           &merge_model_files, nullptr);
}

const RegisterCommand registered(12, add_model_edit_commands);

}  // namespace

}  // namespace flynn::cli
