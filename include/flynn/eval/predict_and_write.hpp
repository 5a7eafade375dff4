#pragma once
// `flynn predict` as a library operation: classify the rows of a file with a saved model,
// chunk by chunk (io::predict_file), writing the predictions CSV as each chunk is done, and
// report the tally (accuracy when the rows have labels). The settings are a table
// (predict_file_fields).
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "flynn/eval/report.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/row_stream.hpp"
#include "flynn/option_table.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

/// What to predict, as given.
struct PredictFileRequest {
  std::string model, data, out, tie_break = "lowest";
  std::uint64_t tie_seed = 0;
  std::size_t chunk_rows = io::ChunkLimits{}.max_rows;
  bool proba = false;
  /// A folder for the classification report of the rows with labels (report_files.hpp);
  /// empty: none. Needs a label column.
  std::string report;
};

/// The flags of PredictFileRequest: --model, --data, --out, --proba, --tie-break,
/// --tie-seed, --report, hidden --chunk-rows.
const OptionTable<PredictFileRequest>& predict_file_fields();

/// How the request is run.
struct PredictFileRun {
  io::LoadOptions load;            ///< how --data is read (the model's table is added)
  std::uint64_t max_input_bytes = io::kDefaultMaxInputBytes;  ///< of the model file
  io::ModelMemoryLimit model_memory{0, ModelUse::Predict};
  int threads = 0;
  ProgressFn progress;
  /// Where the CSV goes without --out (a front-end's standard output, so named in a write
  /// error); none: keep the
  /// predicted names (and ids) in the report's JSON instead.
  std::ostream* csv = nullptr;
};

/// Predicts and reports: {"command": "predict", model, data, rows, seconds, accuracy,
/// correct, rows_with_unknown_label?, out? | predictions (+ ids), report?} and one summary
/// line (and one naming the report).
/// With request.out the CSV is written there atomically (never over an input); else to
/// how.csv. Throws flynn::Error on a bad model, data or option, and when a write fails.
Report predict_and_write(const PredictFileRequest& request, const PredictFileRun& how);

}  // namespace flynn::eval
