#pragma once
// Calibrated class probabilities from FlyNN scores, and the metrics that judge them.
//
// FlyNN scores a row by summing, over its ρ winners, each class's filter value γ^count
// (0^0 = 1): the lower the score, the more the class has seen the row's units, and every
// score lies in [0, ρ]. Calibrated probabilities weigh a softmax of the negated scores by
// the class frequencies π_l of the training rows:
//
//   p_l = π_l·exp(−score_l / (ρ·t)) / Σ_k π_k·exp(−score_k / (ρ·t)),
//
// with a temperature t relative to ρ: score/ρ ∈ [0, 1] whatever ρ is, so one t transfers
// across configurations, and a default chosen on one group of datasets is meaningful on
// another. Why the prior: FlyNN's scores often tie (with small γ every class that has seen
// all of a row's units scores ≈ 0), and a tie carries no evidence, so the probabilities fall
// back to the class frequencies instead of 1/L; with balanced classes π is uniform and this is
// plain temperature scaling. Large t tends to the prior, small t to a hard vote. Where the
// scores differ, p is monotone in each score: t only changes how sure the probabilities are.
//
// fit_temperature() picks t by minimising the log-loss of out-of-fold scores (scores each row
// gets from a model that did not see it; FlyCvEvaluator::out_of_fold_scores). The logits
// −β·score_l + log π_l are affine in β = 1/t, so the log-loss is convex in β and unimodal in
// log t, and a golden-section search over log t finds its minimum.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/scoring.hpp"

namespace flynn::eval {

/// Probability floor used by log_loss: log(1e-15) ≈ −34.5 bounds the loss of one row when a
/// model puts (numerically) zero mass on the true class.
inline constexpr double kLogLossFloor = 1e-15;

/// Bins of expected_calibration_error (the usual choice, Guo et al. 2017).
inline constexpr std::size_t kEceBins = 15;

/// Mean negative log-likelihood of the true classes: −(1/n)·Σ_r log max(p[r·L + y_r], 1e-15).
/// `proba` is n × L row-major, `labels` has n entries < L. Throws flynn::Error on mismatched
/// sizes, an out-of-range label or n = 0.
double log_loss(const std::vector<double>& proba, std::size_t n_classes,
                const std::vector<std::uint32_t>& labels);

/// Expected calibration error with `bins` equal-width bins of the top-class probability
/// (confidence): ECE = Σ_b (n_b / n)·|accuracy_b − confidence_b|, where bin b holds the rows
/// whose confidence lies in (b/B, (b+1)/B] (bin 0 also takes a confidence of exactly 0),
/// accuracy_b is the fraction of them whose top class (the first of equal maxima) is the true
/// class and confidence_b their mean confidence. Empty bins contribute 0. Same size checks as
/// log_loss; `bins` must be at least 1.
double expected_calibration_error(const std::vector<double>& proba, std::size_t n_classes,
                                  const std::vector<std::uint32_t>& labels,
                                  std::size_t bins = kEceBins);

/// Class frequencies with add-one (Laplace) smoothing: flynn::class_priors (scoring.hpp).
using flynn::class_priors;
/// The same from labels (each < n_classes).
std::vector<double> class_priors(const std::vector<std::uint32_t>& labels, std::size_t n_classes);

/// flynn::scores_to_probabilities (scoring.hpp) over n rows of L scores (n × L row-major,
/// like the scores). Throws
/// flynn::Error when t ≤ 0, ρ = 0, the scores are not a whole number of rows or `priors`
/// does not hold L positive values.
std::vector<double> scores_to_probabilities(const std::vector<double>& scores, std::size_t n_classes,
                                            std::uint32_t rho, double temperature,
                                            const std::vector<double>& priors);


/// Search range of fit_temperature (relative temperature t).
inline constexpr double kMinTemperature = 1e-3;
inline constexpr double kMaxTemperature = 10.0;

/// Outcome of fit_temperature.
struct TemperatureFit {
  double temperature = 1.0;     ///< the t of minimum log-loss on the given scores
  double log_loss = 0.0;        ///< log-loss at that t
  double ece = 0.0;             ///< ECE (15 bins) at that t
};

/// Chooses t ∈ [kMinTemperature, kMaxTemperature] minimising the log-loss of
/// scores_to_probabilities(scores, L, ρ, t, priors) against `labels` (golden-section search
/// on log t, 60 iterations: the bracket shrinks to a relative width of ~1e-12).
/// Deterministic. Throws like log_loss and scores_to_probabilities.
TemperatureFit fit_temperature(const std::vector<double>& scores, std::size_t n_classes,
                               std::uint32_t rho, const std::vector<double>& priors,
                               const std::vector<std::uint32_t>& labels);

/// Calibration of one configuration on out-of-fold scores, with honest held-out figures.
struct CalibrationReport {
  TemperatureFit fit;              ///< t fitted on all out-of-fold scores (what a model stores)
  /// Cross-fitted: for each fold f, t fitted on the other folds' out-of-fold scores and
  /// applied to fold f's rows; log-loss and ECE over all rows. No row's probability uses a t
  /// fitted on that row, so these estimate the calibration on new data.
  double heldout_log_loss = 0.0, heldout_ece = 0.0;
  /// Defaults::temperature on the same scores (what an untuned model gives).
  double default_log_loss = 0.0, default_ece = 0.0;
};

/// Fits t on out-of-fold `scores` (n × L) of rows with `labels`, priors from the labels
/// (weighted by `class_weights`, the model's FlyNN::class_weights(), as the model's
/// probabilities are; empty = all 1), and computes the held-out (cross-fitted over
/// `fold_of_row`'s k folds) and default figures. Throws like fit_temperature, or when a
/// fold id is ≥ k.
CalibrationReport calibrate_out_of_fold(const std::vector<double>& scores, std::size_t n_classes,
                                        std::uint32_t rho, const std::vector<std::uint32_t>& labels,
                                        const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                        const std::vector<double>& class_weights = {});
/// The log-loss of the probabilities a tuned model would give, judged on out-of-fold
/// scores: t fitted on all of them (fit_temperature, as `flynn tune` stores it in the
/// model), then each fold's mean −log p of the true class at that t. What
/// `flynn tune --metric log_loss` minimises.
struct OutOfFoldLogLoss {
  double temperature = 1.0;            ///< the fitted t
  std::vector<double> fold_log_loss;   ///< per fold (0 for a fold without rows)
  double log_loss = 0.0;               ///< mean of fold_log_loss
};
/// From out-of-fold `scores` (n × L) of rows with `labels` and fold ids < k; priors as
/// calibrate_out_of_fold's. Throws like calibrate_out_of_fold.
OutOfFoldLogLoss out_of_fold_log_loss(const std::vector<double>& scores, std::size_t n_classes,
                                      std::uint32_t rho, const std::vector<std::uint32_t>& labels,
                                      const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                      const std::vector<double>& class_weights = {});

/// The class weights of a model of `config` trained on rows with `labels` (class ids into
/// `classes`): config.class_weight from the rows per class.
std::vector<double> class_weights_of_rows(const FlyConfig& config, const LabelSet& classes,
                                          const std::vector<std::uint32_t>& labels);

}  // namespace flynn::eval
