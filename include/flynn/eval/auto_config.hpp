#pragma once
// The automatic choice of a configuration (`flynn train --auto`, `flynn eval --auto`): a
// handful of configurations around the default rule, judged by stratified k-fold CV on the
// training rows, and the default kept unless another beats it by more than a margin.
//
// Why: the default rule (config.hpp, Defaults) was chosen on the OpenML selection half; on
// some kinds of data (one-hot tables, many classes in few dimensions) another variant or γ
// is far better, and `flynn tune`'s search finds it, but on small sets a search over many
// points picks noise (docs/design/defaults.md, "The automatic choice"). So
// the candidates are few and fixed, the rule's own configuration is one of them, and it is
// replaced only by a clear winner.
//
// Every candidate is one hashing pass per fold (FlyCvEvaluator), with every γ of the grid
// scored from the same hashes. The choice is deterministic (fixed folds, fixed candidate
// order, first on ties) and independent of the thread count. It is for central training:
// federated parties must agree on a configuration before any row is counted, so they give
// the chosen one explicitly.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

/// One configuration the automatic choice considers.
struct AutoCandidate {
  std::string name;  ///< "default", or the variant's name with " m×4" for the larger hash
  FlyConfig config;  ///< its γ is the rule's (or the given) γ
};

/// The candidates for d features and L classes: the default rule's configuration first, then
/// each variant of a fixed list (thermo-sign for d ≤ 64, the anchor variants for d ≤ 32),
/// each also with 4× the rule's units where that stays within Defaults::max_m. Settings the
/// user gave stay fixed in every candidate (a given variant leaves only the default's m×4 as
/// an alternative; a given m leaves only the variants). Each configuration appears once.
std::vector<AutoCandidate> auto_candidates(const HyperParams& given, std::uint32_t d, std::size_t n_classes);

/// The γ grid scored for every candidate: the given γ alone, else {0, 0.5, 0.8, 0.9}
/// (0.8 is the default's).
std::vector<double> auto_gammas(const HyperParams& given);

struct AutoOptions {
  std::uint32_t folds = 3;           ///< stratified CV folds on the training rows
  std::uint64_t fold_seed = 0;       ///< their seed
  /// The choice reads at most this many rows (a stratified subsample, seeded by fold_seed);
  /// the chosen configuration is then trained on all rows.
  std::size_t max_rows = 20000;
  /// Another candidate replaces the default only when its CV metric is higher by more than
  /// auto_margin(rows read): half a binomial standard error of an accuracy near 0.5, at
  /// least min_margin (chosen on the selection groups, docs/design/defaults.md, "The automatic choice").
  double margin_standard_errors = 0.5;
  double min_margin = 0.005;
  /// What the CV judges by (auto_metric: balanced accuracy when classes are weighted).
  CvMetric metric = CvMetric::Accuracy;
  int threads = 0;
};

/// The margin for a choice made on n rows: max(min_margin, margin_standard_errors·√(0.25/n)).
double auto_margin(const AutoOptions& options, std::size_t n_rows);

/// The metric the choice judges by for these settings: balanced accuracy when the user
/// weighs the classes (--class-weight: the minority classes are to count), else accuracy.
CvMetric auto_metric(const HyperParams& given);

/// Outcome of choose_auto_config.
struct AutoChoice {
  std::vector<AutoCandidate> candidates;
  std::vector<double> gammas;
  CvMetric metric = CvMetric::Accuracy;   ///< what the choice judged by
  std::vector<std::vector<CvResult>> cv;  ///< [candidate][γ]: CV on the rows the choice read
  std::size_t rows = 0;                   ///< rows the choice read (≤ AutoOptions::max_rows)
  double margin = 0.0;                    ///< auto_margin(options, rows)
  std::size_t chosen = 0;                 ///< index into candidates
  std::size_t chosen_gamma = 0;           ///< index into gammas
  FlyConfig config;                       ///< the chosen configuration, γ included
  double default_metric = 0.0;            ///< the default's CV metric (its own γ)
  double chosen_metric = 0.0;
  double seconds = 0.0;
};

/// The rule alone, on the CV metric of every candidate and γ ([candidate][γ], candidate 0
/// the default): the best (candidate, γ) when it beats metric[0][default_gamma] by more
/// than `margin`, else (0, default_gamma). Ties go to the earlier candidate, then γ.
std::pair<std::size_t, std::size_t> auto_rule(const std::vector<std::vector<double>>& metric,
                                              std::size_t default_gamma, double margin);

/// Cross-validates every candidate on `data` (labelled, trainable) and applies auto_rule with
/// auto_margin.
/// With fewer rows than 2·folds, or fewer than `folds` rows in every class but one, the
/// default is kept without CV (AutoChoice::cv empty). `progress` counts candidates.
/// Throws flynn::Error for unlabelled data or bad settings.
AutoChoice choose_auto_config(const Dataset& data, const HyperParams& given, const AutoOptions& options,
                              const ProgressFn& progress = {});

/// The hyper-parameters that resolve to exactly `config` (every field given), so a chosen
/// configuration can be trained by the operations that take HyperParams.
HyperParams hyper_params_of(const FlyConfig& config);

}  // namespace flynn::eval

namespace flynn::eval {

/// Nested cross-validation of the automatic choice (`flynn eval --auto`): for each outer
/// fold, choose_auto_config on that fold's training rows alone, and the chosen (candidate,
/// γ) scored on the fold's test rows. What every candidate would have scored on the outer
/// folds is kept too (one CV per candidate on all rows with the outer folds, which gives
/// exactly the fold-by-fold scores of training on each fold's training rows), for the
/// chosen candidates, or with score_every_candidate for all of them, so that a study can
/// judge other rules on the same runs (research/auto/auto_study.py).
struct AutoCvResult {
  CvResult cv;                               ///< the nested scores, per outer fold
  std::vector<AutoChoice> choices;           ///< the choice made in each outer fold
  std::vector<AutoCandidate> candidates;     ///< the same for every fold
  std::vector<double> gammas;
  /// [candidate][γ] on the outer folds; empty for a candidate no fold chose unless
  /// score_every_candidate.
  std::vector<std::vector<CvResult>> outer;
};

/// Throws flynn::Error as choose_auto_config does. `progress` counts outer folds.
AutoCvResult cross_validate_auto(const Dataset& data, const HyperParams& given,
                                 const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                 const AutoOptions& options, bool score_every_candidate = false,
                                 const ProgressFn& progress = {});

}  // namespace flynn::eval
