#pragma once
// FlyNN hyper-parameter search over the paper's space (Ram & Sinha, AAAI 2022):
//   m ∈ [2d, 2048d], s ∈ [2, ⌊0.5d⌋], ρ ∈ [8, 256], γ ∈ {0} ∪ [0.1, 0.8], densify on/off,
// with a budget of evaluations (60 in the paper).
//
// An evaluation is one hashing configuration (m, s, ρ, preprocessing): every row is
// hashed once and ALL γ of the γ grid are scored from the same hashes (FlyCvEvaluator),
// because γ only changes filter values. The search therefore samples the 4 hashing
// dimensions and treats γ as an inner grid: {0, 0.1, 0.2, …, 0.8}.
//
// Designs (research/tuning/search_design.md has the measurements that chose the default):
//   * Halton — `budget` points of a scrambled Halton sequence (quasi-random, even cover);
//   * Random — `budget` independent uniform points (the reference's random starts);
//   * HaltonHalving — successive halving over training-set size: N0 Halton points are
//     evaluated on a stratified 1/η^(R−1) subsample of the rows, the best 1/η go on to a
//     η times larger subsample, …, the last rung uses all rows and the shared folds. The
//     budget counts full-data-equivalent evaluations (an evaluation on a fraction q of the
//     rows costs q), so N0 = budget·η^(R−1)/R. R is the largest ≤ max_rungs whose
//     smallest subsample keeps at least min_rows rows (R = 1 is plain Halton).
//
// Mapping of a point u ∈ [0,1)^4 (same for every design):
//   m = ⌊d·(2 + 2046·u0)⌋            (expansion factor uniform in [2, 2048], as the
//                                     reference's skopt Real space; MScale::Log instead
//                                     takes m = ⌊d·2^(1 + 10·u0)⌋, log-uniform)
//   s = 2 + ⌊u1·(⌊0.5d⌋ − 1)⌋        (uniform integer in [2, ⌊0.5d⌋]; s = min(2, d) if ⌊0.5d⌋ < 2)
//   ρ = round(8·32^u2)               (log-uniform integer in [8, 256]), then ρ ≤ ⌊m/2⌋
//   densify = u3 ≥ 0.5
//   variant = variants[⌊u4·V⌋]      (only when the space lists V ≥ 2 variants: a fifth
//                                     dimension; densify is then the paper's alone)
//
// Guard (time and memory): an evaluation hashes n·m·s additions and holds
// fly_cv_memory_bytes(); when either exceeds the guard, m is lowered to the largest value
// that fits (never below 2d, ρ+1), the evaluation is marked `capped` and the reason is
// recorded in the trace, the result, and the reports.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/eval/time_budget.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

enum class SearchDesign { Halton, Random, HaltonHalving };

/// How the expansion factor m/d is spread over [min_expansion, max_expansion].
enum class MScale { Linear, Log };
/// "linear", "log"; throws flynn::Error otherwise.
MScale parse_m_scale(const std::string& name);
const char* m_scale_name(MScale scale);

/// "halton", "random", "halving"; throws flynn::Error otherwise.
SearchDesign parse_search_design(const std::string& name);
const char* search_design_name(SearchDesign design);

/// The searched space (defaults: the paper's).
struct SearchSpace {
  double min_expansion = 2.0;                 ///< m ≥ min_expansion·d
  double max_expansion = 2048.0;              ///< m ≤ max_expansion·d
  MScale m_scale = MScale::Linear;            ///< uniform or log-uniform m/d
  double max_connection_fraction = 0.5;       ///< s ≤ ⌊fraction·d⌋
  std::uint32_t min_rho = 8, max_rho = 256;   ///< ρ range
  std::vector<double> gammas = {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8};
  bool search_densify = true;                 ///< false: always L2 normalisation only
  /// Method variants (config.hpp) to choose among. With two or more, the variant is a fifth
  /// design dimension: u4 picks variants[⌊u4·V⌋], and densify (paper only) becomes L2
  /// normalisation for the others. One entry keeps the four paper dimensions, so the
  /// paper's study (`reproduce`) draws exactly the points it drew before variants existed.
  std::vector<Variant> variants = {Variant{}};
};

/// Per-evaluation limits (see the header comment).
struct SearchGuard {
  /// Hashing additions n·m·s per evaluation. 1e11 is ~5 s of one core at the FlyHash
  /// kernel's 20–30 G additions/s; only the largest m·s of the d ≥ 150 datasets reach it.
  double max_work = 1e11;
  /// Peak memory of one evaluation (lifting matrix + counts + winners).
  std::uint64_t max_memory = std::uint64_t{768} << 20;
};

struct SearchOptions {
  SearchDesign design = SearchDesign::HaltonHalving;  ///< measured best (research/tuning/search_design.md)
  std::uint32_t budget = 60;        ///< evaluations (full-data equivalents for HaltonHalving)
  SearchSpace space;
  SearchGuard guard;
  std::uint64_t seed = 0;           ///< design and subsample randomness (stream Search)
  std::uint64_t fly_seed = Defaults::seed;  ///< lifting-matrix seed of every evaluated config
  std::uint32_t halving_eta = 3;    ///< HaltonHalving: keep the best 1/η per rung
  std::uint32_t halving_max_rungs = 3;
  std::size_t halving_min_rows = 500;
  int threads = 0;                  ///< hashing and scoring threads
  /// What the search maximises (mean over folds): accuracy, or for imbalanced classes
  /// balanced accuracy or macro-F1, or minus the log-loss of the calibrated probabilities
  /// (CvMetric::LogLoss: each evaluation then also fits its temperature).
  /// SearchEvaluation::accuracy and gamma_accuracy hold it.
  CvMetric metric = CvMetric::Accuracy;
  /// The class weight of every evaluated configuration (the model's, class_weight.hpp).
  ClassWeight class_weight;
  /// Wall-clock limit in seconds (0 = none). A candidate is started only when its predicted
  /// time (from the seconds per work unit of the evaluations so far, time_budget.hpp), the
  /// full-data evaluation of the best candidate so far and `reserve_full_evaluations` more
  /// of it fit before the limit. Otherwise no further candidate is started on a subsample
  /// rung, the best candidate so far goes straight to the full-data rung, and that rung
  /// stops after its first evaluation; at least one full-data evaluation always happens.
  /// Not part of a study's fingerprint: studies run without it.
  double time_limit_seconds = 0.0;
  /// Configurations evaluated first on the first rung, as candidates beside the design's
  /// points (each γ of the grid scored, and ranked with the points): `flynn tune` under a time
  /// limit passes the defaults' own configuration, so that it competes from the start
  /// (SearchEvaluation::candidate numbers them first). Empty by default.
  std::vector<FlyConfig> first_candidates;
  /// With a time limit: time kept free at its end for what follows the search, in
  /// full-data evaluations of the best candidate (`flynn tune` keeps its calibration and
  /// the training of the model).
  double reserve_full_evaluations = 0.0;
};

/// Design dimensions of a space: 4 (m, s, ρ, densify), plus 1 when it has several variants.
std::size_t search_dimensions(const SearchSpace& space);

/// A point of the unit cube (search_dimensions(space) coordinates) mapped to a
/// configuration (γ left at 0), before the guard. Its filter scoring is its variant's
/// default (Defaults::filter_scoring: relative but for paper), as train gives it.
FlyConfig search_point_config(const SearchSpace& space, const std::vector<double>& u,
                              std::uint32_t d, std::uint64_t fly_seed);

/// Applies the guard for n rows and L classes: lowers config.m if needed. Returns "" when
/// nothing changed, otherwise the reason ("n·m·s = … > max_work …").
std::string apply_search_guard(FlyConfig& config, std::size_t n_rows, std::size_t n_classes,
                               const SearchGuard& guard);

/// One evaluated configuration.
struct SearchEvaluation {
  std::size_t candidate = 0;          ///< index of the design point (after first_candidates)
  std::uint32_t rung = 0;             ///< successive-halving rung (0 for one-rung designs)
  std::size_t rows = 0;               ///< rows it was evaluated on
  std::uint32_t requested_m = 0;      ///< m before the guard
  FlyConfig config;                   ///< evaluated config; gamma = the best γ
  std::string cap_reason;             ///< non-empty when the guard lowered m
  std::vector<double> gamma_accuracy; ///< mean CV metric (SearchOptions::metric) for each γ
  double accuracy = 0.0;              ///< that metric, best over γ (first γ on ties)
  double seconds = 0.0;               ///< hashing + scoring time
};

struct SearchResult {
  std::vector<SearchEvaluation> trace;  ///< in evaluation order
  std::size_t best = 0;                 ///< index into trace of the best full-data evaluation
  CvResult best_cv;                     ///< fold accuracies of the best (config, γ)
  FlyConfig best_config;
  std::uint32_t capped = 0;             ///< evaluations the guard changed
  std::uint32_t full_evaluations = 0;   ///< evaluations on all rows
  double cost = 0.0;                    ///< full-data-equivalent evaluations spent
  double seconds = 0.0;
  bool time_limited = false;            ///< the time limit cut the search short
  std::size_t planned_evaluations = 0;  ///< evaluations the budget planned (all rungs)
  WorkRate rate;                        ///< seconds per work unit of its evaluations
};

/// Runs the search on `data` with the shared folds (the full-data rung uses exactly these
/// folds; subsample rungs draw stratified folds of their own from options.seed). Progress
/// counts rows evaluated (an evaluation on r rows advances it by r), so its rate is steady
/// across rungs and an ETA from it is meaningful. Throws flynn::Error on bad options (budget 0, empty γ grid) or data.
SearchResult search_flynn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                          std::uint32_t k_folds, const SearchOptions& options,
                          const ProgressFn& progress = {});

}  // namespace flynn::eval
