#pragma once
// Calibrated probabilities, fitted when a model is trained (docs/guide/probabilities.md).
//
// A model's probabilities are
//
//   p_l = (1 − w)·q_l + w·π_l,   q = softmax(−score / (ρ·t)),
//
// (scores_to_probabilities in scoring.hpp; π the class priors, class_priors), with two
// numbers, the temperature t and the prior weight w ∈ [0, 1): the Calibration. q follows
// the score order; the prior's share w keeps the probabilities from the extremes where the
// scores say little, and orders classes whose scores tie. predict() returns the class of
// highest probability (argmax_class), so the two agree on every row.
//
// The fit needs no search and no held-out split. FlyNN's counts are integer row sums, so a
// training row's own contribution can be taken out of them: its leave-one-out scores
// (LeaveOneOutScorer) are exactly the scores the model trained without it gives (up to
// the row's share of "balanced" class weights and of standardising statistics, which stay
// those of all rows). The fit scores the training rows that way and adds up, for every
// candidate of one fixed grid (calibration_grid), the log-loss in fixed-point integers and
// the rows whose class has the highest probability; and the rows whose class has the
// lowest score (CalibrationLoss). It takes the candidate of least loss among those whose
// decisions are right on at least as many rows as the score order's (choose_calibration):
// the prior may order near-ties only where that costs no leave-one-out accuracy (w = 0
// never does: its decisions are the score order's). Integer sums do not depend on the
// order of the rows, so the fit is the same for any thread count, for a file read chunk by
// chunk, and for a federation, whose parties each score their own rows against the
// aggregated counts and sum their totals once more.
//
// Rows: every row up to kCalibrationRows, else a sample of about that many, chosen by a
// keyed hash of the row's codes and class (CalibrationSample::wants): the same rows
// whichever party or chunk holds them.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "flynn/class_counts.hpp"
#include "flynn/config.hpp"

namespace flynn {

/// Where a model's calibration comes from (stored in the model file, shown by `info`).
enum class CalibrationSource : std::uint8_t {
  Default = 0,      ///< none fitted: Defaults::temperature and Defaults::prior_weight
                    ///< (models made from counts alone, or by partial_fit only; files
                    ///< written before fits)
  LeaveOneOut = 1,  ///< fitted at training time on the training rows' leave-one-out scores
  Given = 2,        ///< set by the caller (FlyNN::set_calibration, set_temperature)
  Public = 3,       ///< a differentially private release: from public parameters only,
                    ///< never from rows (dp_calibration in federated/dp_utility.hpp)
};

/// "default", "leave-one-out", "given", "public".
const char* calibration_source_name(CalibrationSource s);

/// How a model's scores become probabilities (see the header comment).
struct Calibration {
  double temperature = Defaults::temperature;    ///< t > 0, relative to ρ
  double prior_weight = Defaults::prior_weight;  ///< w ∈ [0, 1): the class priors' share
  CalibrationSource source = CalibrationSource::Default;
  /// Rows whose leave-one-out scores the fit used (LeaveOneOut), else 0.
  std::uint64_t rows = 0;
  /// Throws flynn::Error unless t is finite and positive and w in [0, 1).
  void validate() const;
  bool operator==(const Calibration&) const = default;
};

/// Rows a fit scores at most in expectation (CalibrationSample); more are sampled.
inline constexpr std::uint64_t kCalibrationRows = 20000;
/// Bytes of codes a sample may hold: with many codes per row (large ρ, pairs) it holds
/// fewer rows, so its memory stays bounded whatever the configuration.
inline constexpr std::uint64_t kCalibrationSampleBytes = std::uint64_t{64} << 20;

/// The fit's candidates, in a fixed order (the same on every machine: the temperatures
/// are made by repeated multiplication, not by a library function): every temperature of
/// a geometric grid from 10^−3 to 10 (16 per decade) with every prior weight of
/// {0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5}.
const std::vector<Calibration>& calibration_grid();

/// A row's log-loss for the fit is at most −log(kCalibrationLogLossFloor).
inline constexpr double kCalibrationLogLossFloor = 1e-15;
/// Fixed-point scale of the summed losses: a row's loss ℓ is added as round(ℓ · 2^20).
inline constexpr double kCalibrationLossScale = 1048576.0;

/// The rows a fit scores: those whose key (a hash of the row's codes and class under the
/// model's seed) falls below a threshold set by the total rows, so about
/// min(n, kCalibrationRows) rows (fewer when their codes would pass
/// kCalibrationSampleBytes), the same whichever part of the data holds them. Holds each
/// chosen row once with its multiplicity (identical rows of a class have identical
/// leave-one-out scores), so its memory is bounded by the distinct rows it holds.
class CalibrationSample {
 public:
  /// A sample for `total_rows` training rows of a model of `config`.
  CalibrationSample(const FlyConfig& config, std::uint64_t total_rows);
  /// An empty sample that wants nothing (for callers without one).
  CalibrationSample() = default;

  /// Whether the row of class `cls` with these codes (config.codes_per_row() of them) is
  /// in the sample.
  bool wants(std::uint32_t cls, const std::uint32_t* codes) const;
  /// A sample that wants the same rows, holding none (e.g. one per worker, merged after).
  CalibrationSample emptied() const;
  /// Adds a row (wanted or not: the caller decides) `times` times.
  void add(std::uint32_t cls, const std::uint32_t* codes, std::uint64_t times = 1);
  /// Adds another sample's rows (same configuration).
  void merge(const CalibrationSample& other);
  /// The same, taking the other's storage when this one holds nothing yet (a per-worker
  /// sample merged into the caller's: its rows are not copied a second time).
  void merge(CalibrationSample&& other);
  /// Room for `rows` distinct rows, so adding them does not copy the codes held so far.
  void reserve(std::size_t rows);
  /// Rows the sample will hold at most in expectation: every row, or about the target.
  std::uint64_t expected_rows() const { return expected_rows_; }

  /// Distinct rows held.
  std::size_t size() const { return classes_.size(); }
  /// Rows held, with their multiplicities.
  std::uint64_t rows() const { return rows_; }
  std::uint32_t codes_per_row() const { return codes_per_row_; }
  std::uint32_t cls(std::size_t r) const { return classes_[r]; }
  std::uint64_t times(std::size_t r) const { return times_[r]; }
  const std::uint32_t* codes(std::size_t r) const { return codes_.data() + r * codes_per_row_; }

 private:
  std::uint64_t key_ = 0;
  std::uint64_t threshold_ = 0;  // rows whose key is at most this are wanted
  bool all_ = false;             // every row is wanted
  std::uint32_t key_codes_ = 0;  // the codes a key reads: the ρ winners
  std::uint32_t codes_per_row_ = 0;
  std::uint64_t expected_rows_ = 0;
  std::uint64_t rows_ = 0;
  std::vector<std::uint32_t> classes_;
  std::vector<std::uint64_t> times_;
  std::vector<std::uint32_t> codes_;
  std::unordered_map<std::uint64_t, std::size_t> index_;  // a row's key → its entry
};

/// Scores of training rows by the model without them: for the row's own class the counts
/// at its codes are one lower (filter values, and under relative scoring its class's mean
/// filter value, recomputed), every other class's scores are the model's.
class LeaveOneOutScorer {
 public:
  /// The scorer of a model's counts, config and class weights (FlyNN::class_weights();
  /// empty = all 1), at the config's γ.
  LeaveOneOutScorer(const ClassCounts& counts, const FlyConfig& config, const std::vector<double>& weights);
  ~LeaveOneOutScorer();
  LeaveOneOutScorer(const LeaveOneOutScorer&) = delete;
  LeaveOneOutScorer& operator=(const LeaveOneOutScorer&) = delete;

  /// The L scores of a training row of class `cls` with these codes, into out[0..L).
  void score(const std::uint32_t* codes, std::uint32_t cls, double* out) const;

 private:
  struct Impl;
  Impl* impl_;
};

/// What the fit adds up over rows with leave-one-out scores: per candidate of
/// calibration_grid() the fixed-point log-loss and the rows its decision gets right, and
/// the rows the score order (argmin_class) gets right.
class CalibrationLoss {
 public:
  /// For leave-one-out scores of a model of these counts (its rows per class are the
  /// priors' n_l), class weights (empty = all 1) and ρ.
  CalibrationLoss(const ClassCounts& counts, const std::vector<double>& weights, std::uint32_t rho);
  /// For scores of rows a model with these rows per class did not learn (out-of-fold
  /// scores): the priors are the model's for every row.
  static CalibrationLoss of_held_out_rows(const std::vector<std::uint64_t>& rows_per_class,
                                          const std::vector<double>& weights, std::uint32_t rho);
  /// Adds a row of class `cls` with scores `scores` (L of them), `times` times; for
  /// leave-one-out scores its prior counts the class's rows without it.
  void add(const double* scores, std::uint32_t cls, std::uint64_t times = 1);
  /// Adds another loss's sums (same model).
  void merge(const CalibrationLoss& other);
  /// Every sum, in one vector of calibration_totals_size() (the one a federation adds up):
  /// the G candidates' losses (calibration_grid()'s order), their right decisions, then the
  /// score order's right decisions.
  const std::vector<std::uint64_t>& totals() const { return totals_; }
  /// Rows added (with their multiplicities).
  std::uint64_t rows() const { return rows_; }

 private:
  CalibrationLoss(const std::vector<std::uint64_t>& rows_per_class, const std::vector<double>& weights,
                  std::uint32_t rho, bool leave_one_out);
  std::size_t n_classes_;
  std::uint32_t rho_;
  bool leave_one_out_;
  std::vector<double> u_;  // the unnormalised priors w_l·(n_l + 1) (w_l the class weights)
  std::vector<double> w_;  // the class weights (what one row of the class adds to u_l)
  double total_ = 0.0;     // Σ_l u_l
  std::vector<std::uint64_t> totals_;
  std::uint64_t rows_ = 0;
  std::vector<double> scratch_;
};

/// The length of CalibrationLoss::totals(): 2·G + 1.
std::size_t calibration_totals_size();

/// The candidate of least summed loss among those with at least the score order's right
/// decisions (the first among equal losses), marked LeaveOneOut with `rows` rows;
/// Calibration{} (Default) when rows is 0. Throws flynn::Error when `totals` is not
/// calibration_totals_size() long.
Calibration choose_calibration(std::span<const std::uint64_t> totals, std::uint64_t rows);

/// The whole fit over a sample: scores every row of `sample` leave-one-out against
/// `counts` and returns its CalibrationLoss (`threads` workers; the sums are the same for
/// any number).
CalibrationLoss calibration_loss(const ClassCounts& counts, const FlyConfig& config,
                                 const std::vector<double>& weights, const CalibrationSample& sample,
                                 int threads = 0);

}  // namespace flynn
