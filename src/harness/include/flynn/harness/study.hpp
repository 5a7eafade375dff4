#pragma once
// One dataset of an evaluation study: every method on the SAME stratified folds, in one
// process, with its best tuned CV accuracy, best hyper-parameters and time; serialisable to
// JSON so that a study can be persisted per dataset and resumed.
//
// Methods (names as they appear in every output):
//   FlyNN  the hyper-parameter search of search.hpp (γ grid inside each evaluation)
//   kNNC   exact kNN, k tuned over {1, 2, 4, …, 64}          (knn_cv.hpp)
//   1NNC   the same neighbour lists, k = 1
//   SBFC   SimHash Bloom-filter classifier, m tuned on a grid (sbfc.hpp)
//   LR     logistic regression, one epoch, learning rate tuned (linear_models.hpp)
//   MLP    one-hidden-layer MLP, one epoch, learning rate tuned
// A method that throws is recorded as failed with its message; the others still run.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/dataset.hpp"
#include "flynn/baselines/linear_models.hpp"
#include "flynn/baselines/sbfc.hpp"
#include "flynn/eval/search.hpp"
#include "flynn/progress.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// The methods in report order; "FlyNN" first, then the baselines.
const std::vector<std::string>& study_methods();
/// The baselines of Table 2, in the paper's order: kNNC, 1NNC, SBFC, LR, MLP.
const std::vector<std::string>& table2_baselines();

/// Everything that determines a dataset's results.
struct StudyOptions {
  std::uint32_t folds = 10;          ///< stratified k-fold CV shared by every method
  std::uint64_t fold_seed = 0;       ///< seed of the fold assignment (stream Folds)
  SearchOptions search;              ///< FlyNN search (budget, design, space, guard, seeds)
  SbfcOptions sbfc;                  ///< SBFC grid, projection seed, time guard
  SgdOptions sgd;                    ///< LR/MLP batch, hidden units, seed
  std::vector<double> learning_rates = default_learning_rates();
  std::vector<std::uint32_t> knn_grid = {1, 2, 4, 8, 16, 32, 64};
  int threads = 0;                   ///< threads for every method (0 = all cores)
  /// The settings that change results, as JSON: a stored result is reused by a resumed
  /// run only when its fingerprint is equal (threads are not part of it).
  nlohmann::json fingerprint() const;
};

/// One method's outcome on one dataset.
struct MethodOutcome {
  std::string method;                  ///< one of study_methods()
  bool ok = false;                     ///< false: `error` says why
  std::string error;
  double accuracy = 0.0;               ///< best mean CV accuracy over the method's grid/search
  double sd = 0.0;                     ///< sd over folds of that best setting
  std::vector<double> fold_accuracy;   ///< its per-fold accuracies
  /// Balanced accuracy and macro-F1 of that setting (chosen by accuracy), means over the
  /// folds; NaN when the method's CV did not keep predictions (results stored before them).
  double balanced_accuracy = std::numeric_limits<double>::quiet_NaN();
  double macro_f1 = std::numeric_limits<double>::quiet_NaN();
  std::string params;                  ///< best hyper-parameters, "k=4", "m=… s=… rho=… …"
  nlohmann::json details;              ///< grid / search trace, guard notes
  std::string note;                    ///< guard or cap notes ("" when none)
  double seconds = 0.0;                ///< wall time of the method's whole tuning
};

/// A dataset's results.
struct DatasetStudy {
  std::string dataset;                 ///< key, e.g. "1485_madelon"
  std::string source;                  ///< file it was read from (or a generator description)
  std::size_t rows = 0, features = 0, classes = 0;
  bool ok = false;                     ///< false: the dataset itself failed (see error)
  std::string error;
  std::vector<MethodOutcome> methods;  ///< in study_methods() order
  double seconds = 0.0;                ///< wall time of the whole study
  /// CPU time of the calling thread during the study: the study's whole CPU time when it
  /// runs on one thread (threads = 1, as each job of `reproduce --jobs N` on N cores), a
  /// lower bound otherwise. Unlike wall time it does not grow when the cores are shared.
  double cpu_seconds = 0.0;
  nlohmann::json settings;             ///< StudyOptions::fingerprint() it was computed with

  /// The outcome of `method` when it exists and succeeded, else nullptr.
  const MethodOutcome* find(const std::string& method) const;
};

/// Runs every method on `data` (labelled, ≥ 2 classes with rows) under `options`. Method
/// failures are caught and recorded; problems with the data itself (unlabelled, one class,
/// fewer rows than folds) throw flynn::Error. `progress` counts finished methods (of 5
/// stages: kNN, SBFC, LR, MLP, FlyNN).
DatasetStudy run_dataset_study(const Dataset& data, const std::string& dataset_id,
                               const StudyOptions& options, const ProgressFn& progress = {});

nlohmann::json to_json(const DatasetStudy& study);
/// Inverse of to_json; throws flynn::Error naming the missing field on malformed input.
DatasetStudy study_from_json(const nlohmann::json& j);

}  // namespace flynn::harness
