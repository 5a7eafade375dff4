#include "flynn/scoring.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn {

namespace {

// Throws unless `weights` is empty or holds one weight per class.
void check_weights(const ClassCounts& counts, const std::vector<double>& weights) {
  if (!weights.empty() && weights.size() != counts.n_classes())
    throw Error(fmt::format("class weights: {} weights for {} classes", weights.size(), counts.n_classes()));
}

// filter_table's values for cells [first, last) of every class, into `table` (cell-major, L
// values per cell, indexed from cell 0).
void fill_filter_values(const ClassCounts& counts, std::uint32_t first, std::uint32_t last, double gamma,
                        const std::vector<double>& weights, std::vector<double>& table) {
  // γ^(w·c) computed once per count value and class, for the counts up to a small bound:
  // the table of powers is sized by what the counts need, never by the largest count
  // alone (one count of 2^28 in a file must not allocate 2 GB). Larger counts, which are
  // rare, call pow directly; the values are the same either way.
  constexpr std::uint32_t kTabulated = 1u << 16;
  const std::size_t L = counts.n_classes();
  const std::uint32_t top = std::min(counts.max_count(), kTabulated);
  std::vector<double> power(std::size_t(top) + 1);
  for (std::size_t l = 0; l < L; ++l) {
    const double w = weights.empty() ? 1.0 : weights[l];
    const auto value = [&](std::uint32_t c) { return filter_value(c, gamma, w); };
    if (l == 0 || !weights.empty())
      for (std::uint32_t c = 0; c <= top; ++c) power[c] = value(c);
    const std::uint32_t* c = counts.of_class(l);
    for (std::uint32_t i = first; i < last; ++i) table[std::size_t(i) * L + l] = c[i] <= top ? power[c[i]] : value(c[i]);
  }
}

// Under Relative scoring, divides each class's values in cells [first, last) by their mean
// (relative_scales over the block, in cell order); then multiplies the block by `factor`.
void scale_block(std::vector<double>& table, std::size_t L, std::uint32_t first, std::uint32_t last,
                 FilterScoring scoring, double factor) {
  if (scoring == FilterScoring::Relative) {
    const std::vector<double> scale = relative_scales(last - first, L, [&](std::uint32_t i, std::size_t l) {
      return table[(std::size_t(first) + i) * L + l];
    });
    for (std::size_t i = std::size_t(first) * L; i < std::size_t(last) * L; ++i) table[i] *= scale[i % L];
  }
  if (factor != 1.0)
    for (std::size_t i = std::size_t(first) * L; i < std::size_t(last) * L; ++i) table[i] *= factor;
}

}  // namespace

std::vector<double> filter_table(const ClassCounts& counts, double gamma, const std::vector<double>& weights) {
  check_weights(counts, weights);
  std::vector<double> table(std::size_t(counts.m()) * counts.n_classes());
  fill_filter_values(counts, 0, counts.m(), gamma, weights, table);
  return table;
}

std::vector<double> model_scoring_table(const ClassCounts& counts, const FlyConfig& config, double gamma,
                                        const std::vector<double>& weights) {
  if (!config.pairs) return scoring_table(counts, gamma, config.filter_scoring, weights);
  check_weights(counts, weights);
  if (counts.m() != config.cells())
    throw Error(fmt::format("counts of {} cells per class, but the config has m + pair cells = {}", counts.m(),
                            config.cells()));
  const std::size_t L = counts.n_classes();
  std::vector<double> table(std::size_t(counts.m()) * L);
  const std::vector<FlyConfig::CellBlock> blocks = config.cell_blocks(gamma);  // units, pairs
  const std::vector<double> factor = block_factors(config);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    fill_filter_values(counts, blocks[b].first, blocks[b].last, blocks[b].gamma, weights, table);
    scale_block(table, L, blocks[b].first, blocks[b].last, config.filter_scoring, factor[b]);
  }
  return table;
}

std::vector<double> block_factors(const FlyConfig& config) {
  if (!config.pairs) return {1.0};
  const double W = Defaults::pair_weight;
  return {1.0 / (1.0 + W), W / ((1.0 + W) * config.pairs)};
}

std::vector<std::uint64_t> seen_bits(const ClassCounts& counts, const std::vector<double>& weights) {
  check_weights(counts, weights);
  std::vector<std::uint64_t> seen(counts.m(), 0);
  for (std::size_t l = 0; l < counts.n_classes() && l < 64; ++l) {
    const std::uint32_t* c = counts.of_class(l);
    if (weights.empty()) {
      for (std::uint32_t i = 0; i < counts.m(); ++i) seen[i] |= static_cast<std::uint64_t>(c[i] != 0) << l;
    } else {
      for (std::uint32_t i = 0; i < counts.m(); ++i)
        seen[i] |= static_cast<std::uint64_t>(filter_value(c[i], 0.0, weights[l]) == 0.0) << l;
    }
  }
  return seen;
}

std::vector<double> scoring_table(const ClassCounts& counts, double gamma, FilterScoring scoring,
                                  const std::vector<double>& weights) {
  std::vector<double> table = filter_table(counts, gamma, weights);
  scale_block(table, counts.n_classes(), 0, counts.m(), scoring, 1.0);
  return table;
}

FilterScorer::FilterScorer(const ClassCounts& counts, double gamma, std::uint32_t rho,
                           const std::vector<double>& weights, FilterScoring scoring)
    : binary_(packs_bits(gamma, counts.n_classes(), scoring)), rho_(rho), n_classes_(counts.n_classes()) {
  if (binary_) {
    seen_ = seen_bits(counts, weights);
  } else {
    table_ = scoring_table(counts, gamma, scoring, weights);
  }
}

FilterScorer::FilterScorer(const ClassCounts& counts, const FlyConfig& config, double gamma,
                           const std::vector<double>& weights)
    : binary_(!config.pairs && packs_bits(gamma, counts.n_classes(), config.filter_scoring)),
      rho_(config.codes_per_row()),
      n_classes_(counts.n_classes()) {
  if (binary_) {
    seen_ = seen_bits(counts, weights);
  } else {
    table_ = model_scoring_table(counts, config, gamma, weights);
  }
}

std::vector<double> class_priors(const std::vector<std::uint64_t>& rows_per_class,
                                 const std::vector<double>& weights) {
  if (rows_per_class.empty()) throw Error("class priors: no classes");
  if (!weights.empty() && weights.size() != rows_per_class.size())
    throw Error(fmt::format("class priors: {} weights for {} classes", weights.size(), rows_per_class.size()));
  double n = 0.0;
  for (std::uint64_t c : rows_per_class) n += static_cast<double>(c);
  const double L = static_cast<double>(rows_per_class.size());
  std::vector<double> p;
  p.reserve(rows_per_class.size());
  for (std::uint64_t c : rows_per_class) p.push_back((static_cast<double>(c) + 1.0) / (n + L));
  if (weights.empty()) return p;
  double total = 0.0;
  for (std::size_t l = 0; l < p.size(); ++l) total += (p[l] *= weights[l]);
  for (double& v : p) v /= total;
  return p;
}

void scores_to_probabilities(const double* scores, std::size_t L, std::uint32_t rho,
                             double t, double w, const double* priors, double* out) {
  if (!(t > 0.0) || !std::isfinite(t))
    throw Error(fmt::format("temperature {}: must be a finite positive number", t));
  if (!(w >= 0.0 && w < 1.0)) throw Error(fmt::format("prior weight {}: must be a number in [0, 1)", w));
  if (rho == 0) throw Error("probabilities: rho must be at least 1");
  for (std::size_t l = 0; l < L; ++l)
    if (!(priors[l] > 0.0) || !std::isfinite(priors[l]))
      throw Error(fmt::format("probabilities: class prior {} is not positive", priors[l]));
  const double inv = 1.0 / (static_cast<double>(rho) * t);
  const double best = *std::min_element(scores, scores + L);
  double total = 0.0;
  for (std::size_t l = 0; l < L; ++l) total += out[l] = std::exp(-(scores[l] - best) * inv);
  for (std::size_t l = 0; l < L; ++l) out[l] = (1.0 - w) * (out[l] / total) + w * priors[l];
}

}  // namespace flynn
