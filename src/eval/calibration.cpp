#include "flynn/eval/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/eval/reliability.hpp"

namespace flynn::eval {

namespace {

void check_rows(const std::vector<double>& values, std::size_t L, const std::vector<std::uint32_t>& labels,
                const char* what) {
  if (L == 0) throw Error(fmt::format("{}: no classes", what));
  if (labels.empty()) throw Error(fmt::format("{}: no rows", what));
  if (values.size() != labels.size() * L)
    throw Error(fmt::format("{}: {} values for {} rows × {} classes", what, values.size(), labels.size(), L));
  for (std::uint32_t y : labels)
    if (y >= L) throw Error(fmt::format("{}: label {} outside [0, {})", what, y, L));
}

void check_priors(const std::vector<double>& priors, std::size_t L) {
  if (priors.size() != L) throw Error(fmt::format("probabilities: {} class priors for {} classes", priors.size(), L));
  for (double p : priors)
    if (!(p > 0.0) || !std::isfinite(p)) throw Error(fmt::format("probabilities: class prior {} is not positive", p));
}

// The checks shared by the out-of-fold calibrations.
void check_folds(const std::vector<double>& scores, std::size_t L, const std::vector<std::uint32_t>& labels,
                 const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k, const char* what) {
  check_rows(scores, L, labels, what);
  if (fold_of_row.size() != labels.size())
    throw Error(fmt::format("{}: {} fold ids for {} rows", what, fold_of_row.size(), labels.size()));
  for (std::uint32_t f : fold_of_row)
    if (f >= k) throw Error(fmt::format("{}: fold id {} ≥ k = {}", what, f, k));
}

}  // namespace

double log_loss(const std::vector<double>& proba, std::size_t L, const std::vector<std::uint32_t>& labels) {
  check_rows(proba, L, labels, "log-loss");
  double total = 0.0;
  for (std::size_t r = 0; r < labels.size(); ++r)
    total -= std::log(std::max(proba[r * L + labels[r]], kLogLossFloor));
  return total / static_cast<double>(labels.size());
}

double expected_calibration_error(const std::vector<double>& proba, std::size_t L,
                                  const std::vector<std::uint32_t>& labels, std::size_t bins) {
  check_rows(proba, L, labels, "ECE");
  ConfidenceBins binned(bins);
  for (std::size_t r = 0; r < labels.size(); ++r) binned.add(proba.data() + r * L, L, labels[r]);
  return binned.ece();
}

std::vector<double> class_priors(const std::vector<std::uint32_t>& labels, std::size_t L) {
  return class_priors(rows_per_class(labels, L));
}

std::vector<double> class_weights_of_rows(const FlyConfig& config, const LabelSet& classes,
                                          const std::vector<std::uint32_t>& labels) {
  const std::vector<std::uint64_t> rows = rows_per_class(labels, classes.size());
  return config.class_weight.weights_for_sizes(classes.names(), {rows.begin(), rows.end()});
}

std::vector<double> scores_to_probabilities(const std::vector<double>& scores, std::size_t L, std::uint32_t rho,
                                            const Calibration& calibration, const std::vector<double>& priors) {
  calibration.validate();
  if (rho == 0) throw Error("probabilities: rho must be at least 1");
  if (L == 0 || scores.size() % L != 0)
    throw Error(fmt::format("probabilities: {} scores are not rows of {} classes", scores.size(), L));
  check_priors(priors, L);
  std::vector<double> p(scores.size());
  for (std::size_t r = 0; r < scores.size() / L; ++r)
    flynn::scores_to_probabilities(scores.data() + r * L, L, rho, calibration.temperature, calibration.prior_weight,
                                   priors.data(), p.data() + r * L);
  return p;
}

namespace {

// The model's fit on held-out scores, without its figures (what the callers that need
// only the calibration use).
Calibration choose_on(const std::vector<double>& scores, std::size_t L, std::uint32_t rho,
                      const std::vector<std::uint32_t>& labels, const std::vector<double>& class_weights) {
  check_rows(scores, L, labels, "calibration");
  if (rho == 0) throw Error("calibration: rho must be at least 1");
  CalibrationLoss loss = CalibrationLoss::of_held_out_rows(rows_per_class(labels, L), class_weights, rho);
  for (std::size_t r = 0; r < labels.size(); ++r) loss.add(scores.data() + r * L, labels[r]);
  return choose_calibration(loss.totals(), loss.rows());
}

// The priors of rows with `labels`, weighted as the model's probabilities are.
std::vector<double> weighted_priors(const std::vector<std::uint32_t>& labels, std::size_t L,
                                    const std::vector<double>& class_weights) {
  return class_priors(rows_per_class(labels, L), class_weights);
}

}  // namespace

CalibrationFit fit_calibration(const std::vector<double>& scores, std::size_t L, std::uint32_t rho,
                               const std::vector<std::uint32_t>& labels, const std::vector<double>& class_weights) {
  CalibrationFit fit;
  fit.calibration = choose_on(scores, L, rho, labels, class_weights);
  const std::vector<double> p =
      scores_to_probabilities(scores, L, rho, fit.calibration, weighted_priors(labels, L, class_weights));
  fit.log_loss = log_loss(p, L, labels);
  fit.ece = expected_calibration_error(p, L, labels);
  return fit;
}

OutOfFoldLogLoss out_of_fold_log_loss(const std::vector<double>& scores, std::size_t L, std::uint32_t rho,
                                      const std::vector<std::uint32_t>& labels,
                                      const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                      const std::vector<double>& class_weights) {
  check_folds(scores, L, labels, fold_of_row, k, "out-of-fold log-loss");
  OutOfFoldLogLoss out;
  out.calibration = choose_on(scores, L, rho, labels, class_weights);
  const std::vector<double> p =
      scores_to_probabilities(scores, L, rho, out.calibration, weighted_priors(labels, L, class_weights));
  std::vector<double> total(k, 0.0);
  std::vector<std::size_t> rows(k, 0);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    total[fold_of_row[r]] -= std::log(std::max(p[r * L + labels[r]], kLogLossFloor));
    ++rows[fold_of_row[r]];
  }
  out.fold_log_loss.assign(k, 0.0);
  for (std::uint32_t f = 0; f < k; ++f)
    if (rows[f] > 0) out.fold_log_loss[f] = total[f] / static_cast<double>(rows[f]);
  if (k > 0) out.log_loss = std::accumulate(out.fold_log_loss.begin(), out.fold_log_loss.end(), 0.0) / k;
  return out;
}

CalibrationReport calibrate_out_of_fold(const std::vector<double>& scores, std::size_t L, std::uint32_t rho,
                                        const std::vector<std::uint32_t>& labels,
                                        const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                        const std::vector<double>& class_weights) {
  check_folds(scores, L, labels, fold_of_row, k, "calibration");
  const std::vector<double> priors = weighted_priors(labels, L, class_weights);
  CalibrationReport rep;
  rep.fit = fit_calibration(scores, L, rho, labels, class_weights);
  const std::vector<double> p_default = scores_to_probabilities(scores, L, rho, Calibration{}, priors);
  rep.default_log_loss = log_loss(p_default, L, labels);
  rep.default_ece = expected_calibration_error(p_default, L, labels);

  // Cross-fitting: each fold's probabilities come from a calibration fitted without it.
  std::vector<double> heldout(scores.size(), 0.0);
  for (std::uint32_t f = 0; f < k; ++f) {
    std::vector<double> fit_scores, test_scores;
    std::vector<std::uint32_t> fit_labels;
    std::vector<std::size_t> test_rows;
    for (std::size_t r = 0; r < labels.size(); ++r) {
      const double* s = scores.data() + r * L;
      if (fold_of_row[r] == f) {
        test_scores.insert(test_scores.end(), s, s + L);
        test_rows.push_back(r);
      } else {
        fit_scores.insert(fit_scores.end(), s, s + L);
        fit_labels.push_back(labels[r]);
      }
    }
    if (test_rows.empty()) continue;
    // A fold that holds every row (k = 1 in effect) has nothing to fit on: the default.
    const Calibration c = fit_labels.empty() ? Calibration{} : choose_on(fit_scores, L, rho, fit_labels, class_weights);
    const std::vector<double> p = scores_to_probabilities(test_scores, L, rho, c, priors);
    for (std::size_t i = 0; i < test_rows.size(); ++i)
      std::copy(p.begin() + i * L, p.begin() + (i + 1) * L, heldout.begin() + test_rows[i] * L);
  }
  rep.heldout_log_loss = log_loss(heldout, L, labels);
  rep.heldout_ece = expected_calibration_error(heldout, L, labels);
  return rep;
}

}  // namespace flynn::eval
