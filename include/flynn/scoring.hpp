#pragma once
// Scoring hashed rows against Fly Bloom Filters: the inference half of Algorithm 1, kept
// apart from FlyNN so that cross-validation and federated parties can score precomputed
// hashes against any counts.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flynn/class_counts.hpp"
#include "flynn/config.hpp"

namespace flynn {

/// One filter value: γ^{weight·c}, 1 for c = 0; for γ = 0 it is 0 exactly when c > 0 and
/// weight·c ≥ 1 (one weighted row has marked the unit), else 1. Weight 1 gives the paper's
/// γ^c (0^0 = 1). Every filter (filter_table, seen_bits, cross-validation's tables) takes
/// its values from here.
inline double filter_value(std::uint32_t count, double gamma, double weight = 1.0) {
  if (count == 0) return 1.0;
  if (gamma == 0.0) return weight * static_cast<double>(count) >= 1.0 ? 0.0 : 1.0;
  return std::pow(gamma, weight * static_cast<double>(count));
}

/// The m × L table (unit-major: unit i's L values are contiguous) of filter values
/// w_l[i] = γ^{c_l[i]}, with 0^0 = 1, so each winner reads one contiguous row.
///
/// With class weights (ClassWeight::weights, class_weight.hpp; empty = all 1) the value is
/// γ^{weight_l·c_l[i]}, and for γ = 0 it is 0 exactly when c_l[i] > 0 and weight_l·c_l[i] ≥ 1
/// (a unit is seen once one weighted row has marked it), else 1.
std::vector<double> filter_table(const ClassCounts& counts, double gamma,
                                 const std::vector<double>& weights = {});

/// FilterScoring::Relative's factor for one class: m / (the sum of its m filter values),
/// i.e. 1 / its mean filter value; 1 when the sum is 0 (every unit marked at γ = 0, or
/// values that underflowed), where every score of the class is 0 anyway. `sum` must be
/// accumulated over the units in order 0…m−1 (relative_scales does), so every scorer of the
/// same counts gets the same factor to the last bit.
inline double relative_scale(double sum, std::uint32_t m) {
  return sum > 0.0 ? static_cast<double>(m) / sum : 1.0;
}

/// relative_scale of each class, with value(i, l) the filter value of unit i and class l.
template <typename ValueOf>
std::vector<double> relative_scales(std::uint32_t m, std::size_t n_classes, ValueOf value) {
  std::vector<double> sum(n_classes, 0.0);
  for (std::uint32_t i = 0; i < m; ++i)
    for (std::size_t l = 0; l < n_classes; ++l) sum[l] += value(i, l);
  for (double& v : sum) v = relative_scale(v, m);
  return sum;
}

/// filter_table for a scoring: with Relative, each class's column multiplied by its
/// relative_scale, so score_winners gives the relative scores.
std::vector<double> scoring_table(const ClassCounts& counts, double gamma, FilterScoring scoring,
                                  const std::vector<double>& weights = {});

/// score_l = Σ_k table[winners[k]][l] over the ρ winners, summed in the winners' order.
inline void score_winners(const std::uint32_t* winners, std::uint32_t rho, const double* table,
                          std::size_t n_classes, double* out) {
  for (std::size_t l = 0; l < n_classes; ++l) out[l] = 0.0;
  for (std::uint32_t k = 0; k < rho; ++k) {
    const double* t = table + std::size_t(winners[k]) * n_classes;
    for (std::size_t l = 0; l < n_classes; ++l) out[l] += t[l];
  }
}

/// The factor each block of FlyConfig::cell_blocks multiplies its (relative) filter values
/// by in model_scoring_table: {1} without pairs; with pairs 1/(1 + W) for the units and
/// W/((1 + W)·pairs) for the pair cells (W = Defaults::pair_weight).
std::vector<double> block_factors(const FlyConfig& config);

/// scoring_table for a model's count cells (FlyConfig::cells()) at decay `gamma`: without
/// pairs, scoring_table(counts, gamma, config.filter_scoring, weights). With second-order
/// filters (pair_codes.hpp) the m unit cells take γ = `gamma` and the pair cells
/// Defaults::pair_gamma, each block relative to its own mean under Relative scoring, and
/// the unit block is multiplied by 1/(1 + W), the pair block by W/((1 + W)·pairs)
/// (W = Defaults::pair_weight): a row's score over its codes is then (unit score + W · pair
/// score / pairs) / (1 + W), on the unit scores' ρ scale.
std::vector<double> model_scoring_table(const ClassCounts& counts, const FlyConfig& config, double gamma,
                                        const std::vector<double>& weights = {});

/// Binary filters (γ = 0), bit-packed: bit l of word i is set when class l has seen unit i
/// (c_l[i] > 0). One 8-byte word per unit instead of L doubles; needs L ≤ 64.
/// With class weights, bit l is set when c_l[i] > 0 and weight_l·c_l[i] ≥ 1, as in
/// filter_table.
std::vector<std::uint64_t> seen_bits(const ClassCounts& counts, const std::vector<double>& weights = {});

/// γ = 0 scores from seen_bits: score_l = ρ − (winners class l has seen), the same values
/// score_winners computes from filter_table(counts, 0).
inline void score_winners_binary(const std::uint32_t* winners, std::uint32_t rho,
                                 const std::uint64_t* seen, std::size_t n_classes, double* out) {
  std::uint32_t hits[64] = {};
  for (std::uint32_t k = 0; k < rho; ++k) {
    for (std::uint64_t w = seen[winners[k]]; w; w &= w - 1) ++hits[__builtin_ctzll(w)];
  }
  for (std::size_t l = 0; l < n_classes; ++l) out[l] = static_cast<double>(rho - hits[l]);
}

/// Scores hashed rows against a model's counts, choosing the bit-packed form for γ = 0 with
/// Absolute scoring. `weights`: the class weights (ClassWeight::weights; empty = all 1).
class FilterScorer {
 public:
  FilterScorer(const ClassCounts& counts, double gamma, std::uint32_t rho,
               const std::vector<double>& weights = {},
               FilterScoring scoring = FilterScoring::Absolute);
  /// The scorer of a model's counts (any cells: with pairs, model_scoring_table's), at decay
  /// `gamma` (cross-validation scores one count table at several); score() then takes a
  /// row's config.codes_per_row() codes (PairCoder).
  FilterScorer(const ClassCounts& counts, const FlyConfig& config, double gamma,
               const std::vector<double>& weights = {});
  /// Scores of one row's ρ winners (codes, with pairs) into out[0..L).
  void score(const std::uint32_t* winners, double* out) const {
    if (binary_) {
      score_winners_binary(winners, rho_, seen_.data(), n_classes_, out);
    } else {
      score_winners(winners, rho_, table_.data(), n_classes_, out);
    }
  }
  std::size_t n_classes() const { return n_classes_; }
  /// Codes score() reads per row (ρ, or the config's codes_per_row()).
  std::uint32_t codes_per_row() const { return rho_; }
  /// Whether a scorer of these settings keeps seen_bits (γ = 0, at most 64 classes,
  /// absolute scores: relative scores are not whole numbers of winners) instead of the
  /// m × L table; what model_footprint counts.
  static bool packs_bits(double gamma, std::size_t n_classes, FilterScoring scoring) {
    return gamma == 0.0 && n_classes <= 64 && scoring == FilterScoring::Absolute;
  }

 private:
  bool binary_;
  std::uint32_t rho_;
  std::size_t n_classes_;
  std::vector<double> table_;
  std::vector<std::uint64_t> seen_;
};

/// The class with the smallest score; the lowest class id among ties.
inline std::uint32_t argmin_class(const double* scores, std::size_t n_classes) {
  std::size_t best = 0;
  for (std::size_t l = 1; l < n_classes; ++l)
    if (scores[l] < scores[best]) best = l;
  return static_cast<std::uint32_t>(best);
}

/// The class of highest probability; the lowest class id among ties (as numpy's argmax).
/// FlyNN::predict's decision: the class predict_proba ranks first.
inline std::uint32_t argmax_class(const double* probabilities, std::size_t n_classes) {
  std::size_t best = 0;
  for (std::size_t l = 1; l < n_classes; ++l)
    if (probabilities[l] > probabilities[best]) best = l;
  return static_cast<std::uint32_t>(best);
}

/// Class frequencies with add-one (Laplace) smoothing, (n_l + 1)/(n + L), from the rows per
/// class (ClassCounts::rows_per_class): positive for every class, so a class without rows
/// never gets probability exactly 0. With class weights (empty = all 1) each frequency is
/// multiplied by its class's weight and the priors renormalised, so "balanced" weights give
/// (nearly) uniform priors. Throws flynn::Error for no classes or a weight count that is
/// not the class count.
std::vector<double> class_priors(const std::vector<std::uint64_t>& rows_per_class,
                                 const std::vector<double>& weights = {});

/// Calibrated probabilities of one row of L scores (FlyNN::predict_proba):
///
///   p_l = (1 − w)·q_l + w·π_l,   q_l = exp(−score_l / (ρ·t)) / Σ_k exp(−score_k / (ρ·t)),
///
/// q computed from the lowest score so nothing overflows. The temperature t is relative
/// to ρ (score/ρ ∈ [0, 1] whatever ρ is); t and the prior weight w ∈ [0, 1) are the
/// model's Calibration (calibration.hpp), fitted at training time on leave-one-out scores.
/// q follows the score order; the priors π (class_priors) take the share w, which keeps the
/// probabilities from the extremes where the scores say little and orders classes whose
/// scores tie by their frequency. docs/guide/probabilities.md explains it. Throws flynn::Error
/// when t is not finite and positive, w is not in [0, 1), ρ = 0, or `priors` does not hold
/// L positive values.
void scores_to_probabilities(const double* scores, std::size_t n_classes, std::uint32_t rho,
                             double temperature, double prior_weight, const double* priors, double* out);

}  // namespace flynn
