#pragma once
// `flynn eval` as a library operation: stratified k-fold cross-validation accuracy of one
// configuration on one labelled file, optionally with the probability calibration and a
// baseline on the same folds. The settings are a table (cross_validate_file_fields).
#include <cstdint>
#include <string>

#include "flynn/config.hpp"
#include "flynn/eval/report.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/option_table.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

/// What to cross-validate, as given (the configuration comes with the run: its flags are
/// the hyper-parameter table's, settings_table.hpp).
struct CrossValidateFileRequest {
  std::string data;
  std::uint32_t folds = 10;
  std::uint64_t fold_seed = 0;
  bool knn = false;
  bool calibration = false;
  /// Nested CV of `flynn train --auto` (auto_config.hpp: cross_validate_auto).
  bool auto_config = false;
  /// Hidden: with --auto, every candidate is also scored on the outer folds, not only the
  /// chosen ones (research/auto/auto_study.py replays other rules on them).
  bool auto_study = false;
  /// A folder for the classification report of the out-of-fold answers (report_files.hpp);
  /// empty: none.
  std::string report;
};

/// The flags of CrossValidateFileRequest: --data, --folds, --fold-seed, --calibration, --knn,
/// --auto, --report (hidden: --auto-study).
const OptionTable<CrossValidateFileRequest>& cross_validate_file_fields();

/// How the request is run.
struct CrossValidateFileRun {
  io::LoadOptions load;  ///< how --data is read
  HyperParams hyper;     ///< the configuration, resolved for the data's shape
  int threads = 0;
  ProgressFn progress;   ///< of the FlyNN folds
  /// Runs for --knn; without it --knn is an error naming the missing FAISS baseline.
  FoldComparison knn;
};

/// Cross-validates and reports: {"command": "eval", rows, features, classes, folds,
/// fold_seed, config, accuracy_mean, accuracy_sd, fold_accuracy, seconds, calibration?,
/// the baseline's keys?, report?} and the same as text. Throws flynn::Error on bad data or settings.
Report cross_validate_file(const CrossValidateFileRequest& request, const CrossValidateFileRun& how);

}  // namespace flynn::eval
