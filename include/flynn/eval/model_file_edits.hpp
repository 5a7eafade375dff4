#pragma once
// `flynn update`, `flynn forget` and `flynn merge` as library operations: edit saved model
// files exactly (learn rows: equal to training on all of them; forget rows: equal to
// training without them; merge models: equal to one model trained on all their rows) and
// write the result atomically. The settings are tables, so the CLI's flags are made from
// them.
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/eval/report.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/option_table.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

/// update and forget, as given.
struct ModelEditRequest {
  std::string model, data, out;
  std::string labels;  ///< update only: the model's labels in order, then new ones
};

/// --model, --data, --out, --labels (`flynn update`).
const OptionTable<ModelEditRequest>& update_fields();
/// --model, --data, --out (`flynn forget`).
const OptionTable<ModelEditRequest>& forget_fields();

/// merge, as given.
struct MergeRequest {
  std::vector<std::string> models;  ///< at least two
  std::string out;
};

/// The model files (positional) and --out (`flynn merge`).
const OptionTable<MergeRequest>& merge_fields();

/// How an edit runs.
struct ModelEditRun {
  io::LoadOptions load;  ///< how --data is read (the model's features and table are added)
  std::uint64_t max_input_bytes = io::kDefaultMaxInputBytes;  ///< of each model file read
  std::uint64_t model_memory_bytes = 0;  ///< --max-model-memory (0: the default per file)
  int threads = 0;
  ProgressFn progress;  ///< over the rows read
};

/// Each loads, edits, writes the model (to `out`, or over `model` without it) and reports
/// {"command", the inputs, rows_added | rows_removed | models, out, model_bytes, classes,
/// rows_per_class, training_rows} and one line of text. Throws flynn::Error naming the
/// file on bad input, and writes nothing then.
Report update_model_file(const ModelEditRequest& request, const ModelEditRun& how);
Report forget_model_file(const ModelEditRequest& request, const ModelEditRun& how);
Report merge_model_files(const MergeRequest& request, const ModelEditRun& how);

}  // namespace flynn::eval
