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

// Log-loss straight from scores at temperature t, without materialising probabilities:
// −log p_y = (s_y − s_min)/(ρt) − log π_y + log Σ_l π_l·exp(−(s_l − s_min)/(ρt)).
double log_loss_of_scores(const std::vector<double>& scores, std::size_t L, std::uint32_t rho, double t,
                          const std::vector<double>& log_priors, const std::vector<std::uint32_t>& labels) {
  const double inv = 1.0 / (static_cast<double>(rho) * t);
  double total = 0.0;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    const double* s = scores.data() + r * L;
    const double best = *std::min_element(s, s + L);
    double z = 0.0;
    for (std::size_t l = 0; l < L; ++l) z += std::exp(log_priors[l] - (s[l] - best) * inv);
    const double nll = (s[labels[r]] - best) * inv - log_priors[labels[r]] + std::log(z);
    total += std::min(nll, -std::log(kLogLossFloor));
  }
  return total / static_cast<double>(labels.size());
}

// The checks shared by the out-of-fold calibrations, and the priors of `labels` (weighted
// by `class_weights`) the model's probabilities use.
std::vector<double> out_of_fold_priors(const std::vector<double>& scores, std::size_t L,
                                       const std::vector<std::uint32_t>& labels,
                                       const std::vector<std::uint32_t>& fold_of_row,
                                       const std::vector<double>& class_weights, const char* what) {
  check_rows(scores, L, labels, what);
  if (fold_of_row.size() != labels.size())
    throw Error(fmt::format("{}: {} fold ids for {} rows", what, fold_of_row.size(), labels.size()));
  return class_priors(rows_per_class(labels, L), class_weights);
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

std::vector<double> scores_to_probabilities(const std::vector<double>& scores, std::size_t L,
                                            std::uint32_t rho, double t, const std::vector<double>& priors) {
  if (!(t > 0.0) || !std::isfinite(t)) throw Error(fmt::format("temperature {}: must be positive", t));
  if (rho == 0) throw Error("probabilities: rho must be at least 1");
  if (L == 0 || scores.size() % L != 0)
    throw Error(fmt::format("probabilities: {} scores are not rows of {} classes", scores.size(), L));
  check_priors(priors, L);
  std::vector<double> p(scores.size());
  for (std::size_t r = 0; r < scores.size() / L; ++r)
    flynn::scores_to_probabilities(scores.data() + r * L, L, rho, t, priors.data(), p.data() + r * L);
  return p;
}

namespace {

// fit_temperature without its ECE: the t of minimum log-loss and that log-loss, for the
// callers that need only the temperature (the ECE costs one more pass over the scores).
TemperatureFit minimum_log_loss(const std::vector<double>& scores, std::size_t L, std::uint32_t rho,
                                const std::vector<double>& priors, const std::vector<std::uint32_t>& labels) {
  check_rows(scores, L, labels, "temperature fit");
  check_priors(priors, L);
  if (rho == 0) throw Error("temperature fit: rho must be at least 1");
  std::vector<double> log_priors;
  for (double p : priors) log_priors.push_back(std::log(p));
  auto loss = [&](double log_t) {
    return log_loss_of_scores(scores, L, rho, std::exp(log_t), log_priors, labels);
  };
  // Golden-section search on log t; the loss is unimodal there (convex in 1/t).
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double a = std::log(kMinTemperature), b = std::log(kMaxTemperature);
  double x1 = b - phi * (b - a), x2 = a + phi * (b - a);
  double f1 = loss(x1), f2 = loss(x2);
  for (int i = 0; i < 60; ++i) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - phi * (b - a);
      f1 = loss(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + phi * (b - a);
      f2 = loss(x2);
    }
  }
  TemperatureFit fit;
  fit.temperature = std::exp(f1 <= f2 ? x1 : x2);
  fit.log_loss = std::min(f1, f2);
  return fit;
}

}  // namespace

TemperatureFit fit_temperature(const std::vector<double>& scores, std::size_t L, std::uint32_t rho,
                               const std::vector<double>& priors, const std::vector<std::uint32_t>& labels) {
  TemperatureFit fit = minimum_log_loss(scores, L, rho, priors, labels);
  fit.ece = expected_calibration_error(scores_to_probabilities(scores, L, rho, fit.temperature, priors), L, labels);
  return fit;
}

OutOfFoldLogLoss out_of_fold_log_loss(const std::vector<double>& scores, std::size_t L, std::uint32_t rho,
                                      const std::vector<std::uint32_t>& labels,
                                      const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                                      const std::vector<double>& class_weights) {
  const std::vector<double> priors =
      out_of_fold_priors(scores, L, labels, fold_of_row, class_weights, "out-of-fold log-loss");
  OutOfFoldLogLoss out;
  out.temperature = minimum_log_loss(scores, L, rho, priors, labels).temperature;
  const std::vector<double> p = scores_to_probabilities(scores, L, rho, out.temperature, priors);
  std::vector<double> total(k, 0.0);
  std::vector<std::size_t> rows(k, 0);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    const std::uint32_t f = fold_of_row[r];
    if (f >= k) throw Error(fmt::format("out-of-fold log-loss: fold id {} ≥ k = {}", f, k));
    total[f] -= std::log(std::max(p[r * L + labels[r]], kLogLossFloor));
    ++rows[f];
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
  const std::vector<double> priors = out_of_fold_priors(scores, L, labels, fold_of_row, class_weights, "calibration");
  CalibrationReport rep;
  rep.fit = fit_temperature(scores, L, rho, priors, labels);
  const std::vector<double> p_default = scores_to_probabilities(scores, L, rho, Defaults::temperature, priors);
  rep.default_log_loss = log_loss(p_default, L, labels);
  rep.default_ece = expected_calibration_error(p_default, L, labels);

  // Cross-fitting: each fold's probabilities come from a t fitted without it.
  std::vector<double> heldout(scores.size(), 0.0);
  for (std::uint32_t f = 0; f < k; ++f) {
    std::vector<double> fit_scores, test_scores;
    std::vector<std::uint32_t> fit_labels;
    std::vector<std::size_t> test_rows;
    for (std::size_t r = 0; r < labels.size(); ++r) {
      if (fold_of_row[r] >= k) throw Error(fmt::format("calibration: fold id {} ≥ k = {}", fold_of_row[r], k));
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
    // A fold that holds every row (k = 1 in effect) has nothing to fit on: use the default.
    const double t = fit_labels.empty() ? Defaults::temperature
                                        : minimum_log_loss(fit_scores, L, rho, priors, fit_labels).temperature;
    const std::vector<double> p = scores_to_probabilities(test_scores, L, rho, t, priors);
    for (std::size_t i = 0; i < test_rows.size(); ++i)
      std::copy(p.begin() + i * L, p.begin() + (i + 1) * L, heldout.begin() + test_rows[i] * L);
  }
  rep.heldout_log_loss = log_loss(heldout, L, labels);
  rep.heldout_ece = expected_calibration_error(heldout, L, labels);
  return rep;
}

}  // namespace flynn::eval
