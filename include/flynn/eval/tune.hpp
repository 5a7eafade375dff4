#pragma once
// Tuning FlyNN for one labelled dataset: the one home of the hyper-parameter search that both
// `flynn tune` and `flynn reproduce` (run_dataset_study) run.
//
// tune_flynn() on stratified k-fold CV:
//   1. the successive-halving search of search.hpp (search_flynn) over the whole space, with
//      an optional wall-clock limit (SearchOptions::time_limit_seconds); then, optionally
//      (TuneOptions::keep_default_unless_beaten), the defaults' own configuration on the
//      same folds, kept unless the search's best scores higher;
//   2. calibration figures (optional): the model's calibration fit (flynn/calibration.hpp)
//      on the chosen configuration's out-of-fold scores (FlyCvEvaluator::out_of_fold_scores),
//      cross-fitted, so its log-loss and ECE are judged on rows it was not fitted on (the
//      model train_tuned_model trains fits its own calibration, on its rows' leave-one-out
//      scores, as every trained model does);
//   3. a comparison (optional): a caller's classifier cross-validated on the same folds
//      (`flynn tune --knn` passes flynn::baselines' tuned kNN, compare_tuned_knn); a hook,
//      so that evaluation needs no baseline and no FAISS.
// train_tuned_model() then fits the chosen configuration on all rows.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/dataset.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/search.hpp"
#include "flynn/eval/time_budget.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

/// The variants `flynn tune` searches by default: paper, sign, z, zsign, thermo,
/// thermo-sign and the default zsign-q+paper (zsign-q alone and zsign+paper are left out:
/// zsign-q is zsign with 16-level quantisation, a speed option whose accuracy is zsign's).
std::vector<Variant> tune_variants();

/// A classifier compared with the tuned FlyNN on the same folds, run after the search and
/// calibration with the search's thread count; the caller keeps what it computes.
using TuneComparison = std::function<void(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                                          std::uint32_t k_folds, int threads)>;

/// What tune_flynn does beyond the search.
struct TuneOptions {
  /// Budget, design, space, guard, seeds, time limit, threads. The default space is the
  /// paper's ranges with every variant of tune_variants() (the study sets its own).
  SearchOptions search = [] {
    SearchOptions o;
    o.space.variants = tune_variants();
    return o;
  }();
  bool calibrate = true;            ///< report the calibration on out-of-fold scores
  TuneComparison comparison;        ///< run on the same folds when set
  /// Also cross-validate, on the same folds, the configuration `flynn train` gives these
  /// data (default_rule_config), and keep it unless the search's best scores higher: the
  /// search's space does not hold every rule of the defaults (anchor units for d ≤ 16, their
  /// m, ρ and γ), so without it tuning could return less than training with no flags.
  /// `flynn tune` and Python's flynn.tune set it; the paper's study (`reproduce`) does not.
  bool keep_default_unless_beaten = false;
  /// Then also cross-validate the chosen configuration with second-order filters
  /// (FlyConfig::pairs = Defaults::tune_pairs) on the same folds, and take it when it scores
  /// strictly higher (a tie keeps the smaller model). Skipped when the chosen configuration
  /// has pairs already, cannot have them (validate) or would exceed the search's memory
  /// guard. Set with keep_default_unless_beaten by `flynn tune` and Python's flynn.tune.
  bool try_pairs = false;
  /// Before pairs, also cross-validate the chosen configuration with its values transformed
  /// (FlyConfig::value_transform = Defaults::tune_value_transform) on the same folds, and
  /// take it when it scores strictly higher. Skipped unless the chosen configuration
  /// standardises without a transform. Set with try_pairs.
  bool try_value_transform = false;
  /// A deadline for the whole tuning (`flynn tune --time-limit`, Python's time_limit; none
  /// by default). The search gets the time left, less what must follow it (its time
  /// limit, keeping the calibration and `fits_after` trainings free); after it, each
  /// optional phase (the extensions, the calibration unless
  /// keep_out_of_fold_scores, the comparison) starts only when its predicted time
  /// (time_budget.hpp, from the search's measured rate) and what must follow it fit before
  /// the deadline. TuneResult::skipped names the phases left out. With a deadline the
  /// defaults' own configuration (keep_default_unless_beaten) is a first candidate of the
  /// search (SearchOptions::first_candidates), so it competes from the start, instead of an
  /// evaluation after the search (default_candidate then stays empty).
  Deadline deadline;
  /// Trainings of the chosen configuration on all rows that follow tune_flynn within the
  /// deadline (train_tuned_model; more when a test file is judged too).
  double fits_after = 1.0;
  /// Keep the chosen configuration's out-of-fold scores (TuneResult::out_of_fold_scores),
  /// for a report of its out-of-fold answers: computed also without calibration, and
  /// never skipped for the deadline.
  bool keep_out_of_fold_scores = false;
};

/// The configuration `flynn train` gives data of d features and n_classes classes (the
/// default rule, HyperParams{}.resolve) with the search's lifting seed and class weight: the
/// candidate of TuneOptions::keep_default_unless_beaten.
FlyConfig default_rule_config(const SearchOptions& search, std::uint32_t d, std::size_t n_classes);

/// Outcome of tune_flynn.
struct TuneResult {
  SearchResult search;                  ///< trace, best configuration and its CV
  FlyConfig config;                     ///< the chosen configuration: search.best_config, or the default's
  CvResult cv;                          ///< its CV result per fold (search.best_cv, or the default's)
  /// The defaults' own configuration and its CV on the same folds.
  struct DefaultCandidate {
    FlyConfig config;
    CvResult cv;
  };
  /// With TuneOptions::keep_default_unless_beaten: the default candidate, and whether it was
  /// kept (the search's best did not score higher).
  std::optional<DefaultCandidate> default_candidate;
  bool kept_default = false;
  /// One extension of the chosen configuration tried on the same folds: the extended
  /// configuration and its CV (when tried), whether it was taken, and the metric of the
  /// configuration it extends.
  struct ExtensionTrial {
    std::optional<DefaultCandidate> candidate;
    bool taken = false;
    double metric_before = 0.0;
  };
  ExtensionTrial transform;  ///< TuneOptions::try_value_transform's (tried first)
  ExtensionTrial pairs;      ///< TuneOptions::try_pairs'
  std::optional<CalibrationReport> calibration;  ///< when TuneOptions::calibrate
  /// With TuneOptions::keep_out_of_fold_scores: the chosen configuration's out-of-fold
  /// scores, n × L (FlyCvEvaluator::out_of_fold_scores).
  std::vector<double> out_of_fold_scores;
  /// The phases left out to meet TuneOptions::deadline, in the order they came:
  /// "value_transform", "pairs", "calibration", "comparison".
  std::vector<std::string> skipped;
  double seconds = 0.0;                 ///< wall time of tune_flynn
};

/// Stages tune_flynn reports through `progress`, in units of rows processed: the search's
/// evaluations, then (if asked) one calibration pass and the comparison (two units: tuned
/// kNN's two sweeps). The total is fixed
/// when the call starts, so a progress bar's ETA is meaningful from the start.
///
/// Runs the search on `data` with the given folds (fold_of_row from stratified_folds), then
/// calibration and the comparison as asked. Throws flynn::Error for unlabelled data, fewer rows than
/// folds, or bad options; flynn::Cancelled when `progress` returns false.
TuneResult tune_flynn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                      std::uint32_t k_folds, const TuneOptions& options, const ProgressFn& progress = {});

/// The chosen configuration trained on every row of `data` (labels as `labels`, which must
/// contain every label of the data). `progress` counts hashed rows.
FlyNN train_tuned_model(const Dataset& data, const LabelSet& labels, const TuneResult& result,
                        int threads = 0, const ProgressFn& progress = {});

}  // namespace flynn::eval
