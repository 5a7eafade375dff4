#pragma once
// FlyNN cross-validation for the hyper-parameter search: one hashing pass per
// configuration, every γ of a set scored from it, in O(L·m) memory.
//
// cross_validate_flynn_gammas (cross_validation.hpp) keeps k+1 count tables and builds an
// m × L filter table per fold and γ: O(k·L·m) memory and O(k·G·L·m) time, which dominates
// for large m. This evaluator keeps ONE unit-major count table c[i·L + l] of all rows and,
// for fold f, subtracts fold f's rows, scores them, and adds them back: O(n·ρ) count
// updates per fold instead of O(L·m) copies, and scores read γ^c from a per-γ power table
// indexed by count (per class, with class weights). Results are identical to cross_validate_flynn_gammas (same winners,
// same γ^c values, same summation order, same lowest-class tie rule); a test checks it.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "flynn/class_counts.hpp"
#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/progress.hpp"

namespace flynn::eval {

/// Bytes the evaluation of `config` on n rows with L classes holds at its peak: the
/// lifting matrix (m·s uint32), the count table (L·m uint32), the winners (n·ρ uint32)
/// and the hasher's per-thread blocks (small, bounded by 1024 rows).
std::uint64_t fly_cv_memory_bytes(const FlyConfig& config, std::size_t n_rows, std::size_t n_classes);

/// Additions the hashing pass performs: n·m·s (the dominant cost of an evaluation).
double fly_cv_work(const FlyConfig& config, std::size_t n_rows);

/// k-fold CV of FlyNN on one dataset and one fold assignment, for many configurations.
class FlyCvEvaluator {
 public:
  /// Keeps a reference to `data` (which must outlive the evaluator) and copies the folds.
  /// Throws flynn::Error for unlabelled data or a fold vector of the wrong size.
  FlyCvEvaluator(const Dataset& data, std::vector<std::uint32_t> fold_of_row, std::uint32_t k);

  /// Hashes every row once with `config` (its γ is ignored), then returns the CV result
  /// for each of `gammas` (result i for gammas[i]). Every result's `seconds` is the wall
  /// time of the whole call (the hashing is shared). `progress` counts hashed rows.
  /// Standardising variants hash all rows once per fold instead, with that fold's training
  /// statistics (exact FeatureSums of the other folds), as `flynn train` on those rows
  /// would; `progress` then counts the first fold's pass.
  /// With `with_log_loss`, each result also holds the log-loss of its calibrated
  /// probabilities (CvResult::log_loss, out_of_fold_log_loss: the out-of-fold scores, which
  /// the evaluation computes anyway, are kept, n × L per γ).
  std::vector<CvResult> evaluate(const FlyConfig& config, const std::vector<double>& gammas,
                                 int threads = 0, const ProgressFn& progress = {},
                                 bool with_log_loss = false) const;

  /// Out-of-fold scores of `config` (with its γ): n × L row-major, row r scored by the model
  /// trained on every fold but r's, exactly as FlyNN::scores would score it (lower is better).
  /// The input of calibration (calibration.hpp). `progress` counts hashed rows.
  /// Standardising variants hash once per fold with that fold's training statistics.
  /// Second-order filters (FlyConfig::pairs) are scored as FlyNN scores them.
  std::vector<double> out_of_fold_scores(const FlyConfig& config, int threads = 0,
                                         const ProgressFn& progress = {}) const;

  /// Whether `config` takes the per-fold path: standardising variants (statistics from each
  /// fold's training rows, so every row is hashed once per fold) and second-order filters
  /// (whose two blocks FilterScorer scores).
  static bool per_fold(const FlyConfig& config) { return config.variant.standardize || config.pairs != 0; }

  const Dataset& data() const { return data_; }
  const std::vector<std::uint32_t>& folds() const { return fold_of_row_; }
  std::uint32_t k() const { return k_; }

 private:
  // Hashes every row (winners, n × ρ) and counts all rows per unit and class (m × L).
  void hash_and_count(const FlyConfig& config, int threads, const ProgressFn& progress,
                      std::vector<std::uint32_t>& winners, std::vector<std::uint32_t>& counts) const;
  // Adds `delta` (±1) to the counts of `rows`' winners: removes or restores one fold.
  void update_counts(const std::vector<std::size_t>& rows, const std::vector<std::uint32_t>& winners,
                     std::uint32_t rho, int delta, std::vector<std::uint32_t>& counts) const;
  // Filter values (scoring.hpp: filter_value) by count, one block per γ: the value of
  // count c of class l is power[g·block + offsets[l] + c]. Unweighted, every class shares
  // one run of n + 1 values (offsets all 0); weighted, each class has its own run up to
  // its row count.
  struct PowerTable {
    std::vector<double> power;
    std::vector<std::size_t> offsets;
    std::size_t block = 0;
  };
  PowerTable gamma_powers(const std::vector<double>& gammas, const std::vector<double>& weights) const;
  // The factor of each γ and class (γ-major, G × L) that FilterScorer's table applies for
  // `scoring` (scoring.hpp: relative_scales) to unit-major `counts`; all 1 for Absolute.
  std::vector<double> scoring_scales(FilterScoring scoring, const PowerTable& table, std::size_t G,
                                     const std::vector<std::uint32_t>& counts, std::uint32_t m) const;
  // The class weights of fold f's model (config.class_weight from the fold's training
  // rows per class, as the model trained on them would have); empty for none.
  std::vector<double> fold_weights(const FlyConfig& config, std::uint32_t fold) const;
  // For each fold f: the codes of every row (FlyConfig::codes_per_row() per row: winners,
  // then pair cells), hashed with f's training statistics (exact FeatureSums of the other
  // folds) for standardising variants, else once; counts the other folds' rows, and calls
  // visit(f, codes, counts).
  using FoldVisitor = std::function<void(std::uint32_t fold, const std::vector<std::uint32_t>& codes,
                                         const ClassCounts& counts)>;
  void for_each_fold_counts(const FlyConfig& config, int threads, const ProgressFn& progress,
                            const FoldVisitor& visit) const;
  // The per-fold path (per_fold(config)).
  std::vector<CvResult> evaluate_per_fold(const FlyConfig& config, const std::vector<double>& gammas,
                                          int threads, const ProgressFn& progress, bool with_log_loss,
                                          std::chrono::steady_clock::time_point start) const;
  // One CvResult per γ from out-of-fold predictions stored γ-major (predicted[g·n + r]),
  // with the log-loss of each γ's calibrated probabilities when `scores` (γ-major, n × L
  // per γ) is not empty (computed on `threads` threads, one γ per task).
  std::vector<CvResult> results_per_gamma(const FlyConfig& config, const std::vector<std::uint32_t>& predicted,
                                          const std::vector<double>& scores, std::size_t G, int threads,
                                          double seconds) const;

  const Dataset& data_;
  std::vector<std::uint32_t> fold_of_row_;
  std::uint32_t k_;
  std::vector<std::vector<std::size_t>> test_rows_;  // rows of each fold
};

}  // namespace flynn::eval
