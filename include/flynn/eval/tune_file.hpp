#pragma once
// `flynn tune` as a library operation: search FlyNN's hyper-parameters for one labelled
// file by stratified CV (tune.hpp), calibrate its probabilities, save the chosen
// configuration trained on every row, and judge it on an optional test file. The settings
// are a table (tune_file_fields), so the CLI's flags are made from it.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "flynn/eval/report.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/option_table.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

/// What to tune, as given.
struct TuneFileRequest {
  std::string data, model, test, labels, design = "halving", variants;
  std::string metric = "accuracy", class_weight = "none";
  std::uint32_t budget = 60, folds = 10;
  std::uint64_t fold_seed = 0, search_seed = 0;
  double time_limit = 0.0;
  bool knn = false;
  /// A folder for the classification report of the chosen configuration's out-of-fold
  /// answers (report_files.hpp); empty: none.
  std::string report;
};

/// The flags of TuneFileRequest: --data, --model, --budget, --folds, ... (`flynn tune`).
const OptionTable<TuneFileRequest>& tune_file_fields();

/// How the request is run.
struct TuneFileRun {
  io::LoadOptions load;  ///< how --data (and, with the model's table, --test) is read
  int threads = 0;
  /// Called as each phase starts ("tuning", "training the chosen configuration") and with
  /// "" at the end, returning the phase's progress callback (may be empty).
  std::function<ProgressFn(std::string_view phase)> progress;
  /// Runs for --knn; without it --knn is an error naming the missing FAISS baseline.
  FoldComparison knn;
};

/// Tunes, saves request.model and reports: {"command": "tune", rows, features, classes,
/// folds, config, accuracy (CV), search, temperature, calibration, model, model_bytes,
/// knn?, test?, skipped?, report?, seconds} and the same as text. With a time limit the whole
/// call (reading, search, training, saving, the test file, the report) is planned to end
/// within it (TuneOptions::deadline); what was left out for it is listed in "skipped". Throws flynn::Error on bad data or settings,
/// before the search when the test file cannot be opened.
Report tune_file(const TuneFileRequest& request, const TuneFileRun& how);

}  // namespace flynn::eval
