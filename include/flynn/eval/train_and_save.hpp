#pragma once
// `flynn train` as a library operation: train a model on a labelled file
// (io::train_from_file: streamed, exact), save it, and judge it on an optional test file as
// `flynn predict` reads one. The settings are a table (train_file_fields).
#include <cstddef>
#include <string>

#include "flynn/eval/report.hpp"
#include "flynn/io/train_file.hpp"
#include "flynn/option_table.hpp"

namespace flynn::eval {

/// What to train, as given (the configuration and the reading come with the run).
struct TrainFileRequest {
  std::string data, test, model, labels;
  std::size_t chunk_rows = io::ChunkLimits{}.max_rows;  ///< rows read and counted at a time
  /// Choose the configuration first (auto_config.hpp: choose_auto_config, on the whole file
  /// read into memory), then train it. Settings given beside it stay fixed.
  bool auto_config = false;
};

/// The flags of TrainFileRequest: --data, --test, --model, --labels, --auto, hidden --chunk-rows.
const OptionTable<TrainFileRequest>& train_file_fields();

/// Trains, saves request.model (atomically) and reports: {"command": "train", data, rows,
/// features, classes, config, load_seconds, train_seconds, model, model_bytes,
/// save_seconds, table?, test?, auto?} and the same as text. `training` says how: hyper-parameters,
/// reading, public statistics, threads, progress (its labels and chunk_rows are the
/// request's). Throws flynn::Error as io::train_from_file does, and when the model would
/// overwrite an input, or --auto is given with public feature statistics (the choice
/// cross-validates on the rows' own).
Report train_and_save(const TrainFileRequest& request, io::FileTrainingOptions training);

}  // namespace flynn::eval
