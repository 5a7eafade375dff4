#pragma once
// Calibrated class probabilities from FlyNN scores, and the metrics that judge them.
//
// FlyNN scores a row by summing, over its ρ winners, each class's filter value γ^count
// (0^0 = 1): the lower the score, the more the class has seen the row's units, and every
// score lies in [0, ρ]. A model's probabilities (flynn/calibration.hpp) weigh a softmax of
// the negated scores with the class frequencies π_l of the training rows:
//
//   p_l = (1 − w)·softmax(−score / (ρ·t))_l + w·π_l,
//
// with a temperature t relative to ρ and a prior weight w. A model fits (t, a) when it is trained, on its
// training rows' leave-one-out scores. Here the same fit (the same grid of candidates and
// the same rule, flynn::choose_calibration) runs on out-of-fold scores (scores each row gets
// from a model that did not see it; FlyCvEvaluator::out_of_fold_scores), for the figures of
// `flynn eval --calibration` and `flynn tune` and for `flynn tune --metric log_loss`.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flynn/calibration.hpp"
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
/// like the scores) under a calibration (temperature, prior weight), with the class
/// `priors` (class_priors). Throws flynn::Error when the calibration is invalid, ρ = 0, the
/// scores are not a whole number of rows or `priors` does not hold L positive values.
std::vector<double> scores_to_probabilities(const std::vector<double>& scores, std::size_t n_classes,
                                            std::uint32_t rho, const Calibration& calibration,
                                            const std::vector<double>& priors);

/// Outcome of fit_calibration.
struct CalibrationFit {
  Calibration calibration;  ///< chosen on the given scores (source LeaveOneOut, rows n)
  double log_loss = 0.0;    ///< log-loss at it
  double ece = 0.0;         ///< ECE (15 bins) at it
};

/// The model's calibration fit (the grid and rule of flynn::choose_calibration) on
/// held-out `scores` (n × L) of rows with `labels`: priors from the labels' rows per class,
/// weighted by `class_weights` (the model's FlyNN::class_weights(); empty = all 1).
/// Deterministic. Throws like log_loss, or on ρ = 0.
CalibrationFit fit_calibration(const std::vector<double>& scores, std::size_t n_classes, std::uint32_t rho,
                               const std::vector<std::uint32_t>& labels, const std::vector<double>& class_weights = {});

/// Calibration of one configuration on out-of-fold scores, with honest held-out figures.
struct CalibrationReport {
  CalibrationFit fit;  ///< fitted on all out-of-fold scores
  /// Cross-fitted: for each fold f, the calibration fitted on the other folds' out-of-fold
  /// scores and applied to fold f's rows; log-loss and ECE over all rows. No row's
  /// probability uses a calibration fitted on that row, so these estimate the calibration
  /// on new data.
  double heldout_log_loss = 0.0, heldout_ece = 0.0;
  /// Calibration{} (Defaults::temperature, prior weight 1) on the same scores: what a model
  /// without a fitted calibration gives.
  double default_log_loss = 0.0, default_ece = 0.0;
};

/// Fits on out-of-fold `scores` (n × L) of rows with `labels` (fit_calibration with
/// `class_weights`) and computes the held-out (cross-fitted over `fold_of_row`'s k folds)
/// and default figures. Throws like fit_calibration, or when a fold id is ≥ k.
CalibrationReport calibrate_out_of_fold(const std::vector<double>& scores, std::size_t n_classes,
                                        std::uint32_t rho, const std::vector<std::uint32_t>& labels,
                                        const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                        const std::vector<double>& class_weights = {});
/// The log-loss of the probabilities of a calibrated model, judged on out-of-fold scores:
/// the calibration fitted on all of them (fit_calibration), then each fold's mean −log p
/// of the true class under it. What `flynn tune --metric log_loss` minimises.
struct OutOfFoldLogLoss {
  Calibration calibration;             ///< the fitted calibration
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
