#include "flynn/eval/fly_cv.hpp"

#include "flynn/detail/cpu_time.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/class_counts.hpp"
#include "flynn/eval/calibration.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/pair_codes.hpp"
#include "flynn/scoring.hpp"

namespace flynn::eval {

namespace {
// Test rows per scoring task: large enough to amortise the shared task counter.
constexpr std::size_t kScoreChunk = 256;

}  // namespace

std::uint64_t fly_cv_memory_bytes(const FlyConfig& c, std::size_t n_rows, std::size_t n_classes) {
  const std::uint64_t m = c.m, s = c.s, rho = c.rho, cells = c.cells(), codes = c.codes_per_row();
  // The lifting matrix, the counts (and with pairs the per-fold model's filter table of
  // doubles), the winners and the codes of every row.
  const std::uint64_t tables = std::uint64_t(n_classes) * cells * (c.pairs ? 4 + 8 : 4);
  return m * s * 4 + tables + std::uint64_t(n_rows) * (rho + (c.pairs ? codes : 0)) * 4 + (std::uint64_t{1} << 20);
}

double fly_cv_work(const FlyConfig& c, std::size_t n_rows) {
  return static_cast<double>(n_rows) * static_cast<double>(c.m) * static_cast<double>(c.s);
}

FlyCvEvaluator::FlyCvEvaluator(const Dataset& data, std::vector<std::uint32_t> fold_of_row,
                               std::uint32_t k)
    : data_(data), fold_of_row_(std::move(fold_of_row)), k_(k) {
  if (!data.has_labels) throw Error(fmt::format("{}: cross-validation needs labels", data.source));
  if (fold_of_row_.size() != data.n_rows)
    throw Error(fmt::format("{}: {} fold ids for {} rows", data.source, fold_of_row_.size(), data.n_rows));
  test_rows_.resize(k);
  for (std::size_t r = 0; r < fold_of_row_.size(); ++r) {
    if (fold_of_row_[r] >= k) throw Error(fmt::format("fold id {} ≥ k = {}", fold_of_row_[r], k));
    test_rows_[fold_of_row_[r]].push_back(r);
  }
}

std::vector<CvResult> FlyCvEvaluator::results_per_gamma(const FlyConfig& config,
                                                         const std::vector<std::uint32_t>& predicted,
                                                         const std::vector<double>& scores, std::size_t G,
                                                         int threads, double seconds) const {
  const std::size_t n = data_.n_rows, L = data_.classes.size();
  const std::vector<double> weights =
      scores.empty() ? std::vector<double>{} : class_weights_of_rows(config, data_.classes, data_.labels);
  std::vector<CvResult> out(G);
  // One task per γ: each fits its own calibration (one pass over n × L scores per
  // temperature of the grid).
  detail::parallel_for(G, scores.empty() ? 1 : detail::resolve_threads(threads), [&](std::size_t g, int) {
    const std::vector<std::uint32_t> p(predicted.begin() + static_cast<std::ptrdiff_t>(g * n),
                                       predicted.begin() + static_cast<std::ptrdiff_t>((g + 1) * n));
    CvResult r = summarize_predictions(data_.labels, p, fold_of_row_, k_, L, seconds);
    if (!scores.empty()) {
      const std::vector<double> s(scores.begin() + static_cast<std::ptrdiff_t>(g * n * L),
                                  scores.begin() + static_cast<std::ptrdiff_t>((g + 1) * n * L));
      OutOfFoldLogLoss ll = out_of_fold_log_loss(s, L, config.rho, data_.labels, fold_of_row_, k_, weights);
      r.fold_log_loss = std::move(ll.fold_log_loss);
      r.log_loss = ll.log_loss;
      r.calibration = ll.calibration;
    }
    out[g] = std::move(r);
  });
  return out;
}

void FlyCvEvaluator::hash_and_count(const FlyConfig& config, int threads, const ProgressFn& progress,
                                    std::vector<std::uint32_t>& winners,
                                    std::vector<std::uint32_t>& counts) const {
  const std::size_t n = data_.n_rows, L = data_.classes.size();
  const FlyHasher hasher(config, threads);
  winners.assign(n * config.rho, 0);
  hasher.hash(data_.features.data(), n, winners.data(), threads, progress);
  // Unit-major counts of all rows: a winner's L counts are contiguous.
  counts.assign(std::size_t(config.m) * L, 0);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint32_t* w = winners.data() + r * config.rho;
    for (std::uint32_t t = 0; t < config.rho; ++t) ++counts[std::size_t(w[t]) * L + data_.labels[r]];
  }
}

void FlyCvEvaluator::update_counts(const std::vector<std::size_t>& rows,
                                   const std::vector<std::uint32_t>& winners, std::uint32_t rho, int delta,
                                   std::vector<std::uint32_t>& counts) const {
  const std::size_t L = data_.classes.size();
  for (std::size_t r : rows) {
    const std::uint32_t* w = winners.data() + r * rho;
    for (std::uint32_t t = 0; t < rho; ++t)
      counts[std::size_t(w[t]) * L + data_.labels[r]] += static_cast<std::uint32_t>(delta);
  }
}

FlyCvEvaluator::PowerTable FlyCvEvaluator::gamma_powers(const std::vector<double>& gammas,
                                                        const std::vector<double>& weights) const {
  // filter_table's values (scoring.cpp) for c = 0…(rows of the class): one block per class
  // when weighted (offsets[l] into it), else one block of n + 1 shared by every class.
  const std::size_t n = data_.n_rows, L = data_.classes.size();
  PowerTable t;
  t.offsets.assign(L, 0);
  std::vector<std::uint64_t> top(L, n);
  std::size_t block = n + 1;
  if (!weights.empty()) {
    top = rows_per_class(data_.labels, L);
    block = 0;
    for (std::size_t l = 0; l < L; ++l) {
      t.offsets[l] = block;
      block += top[l] + 1;
    }
  }
  t.block = block;
  t.power.resize(block * gammas.size());
  for (std::size_t g = 0; g < gammas.size(); ++g)
    for (std::size_t l = 0; l < (weights.empty() ? 1 : L); ++l) {
      const double w = weights.empty() ? 1.0 : weights[l];
      double* out = t.power.data() + g * block + t.offsets[l];
      for (std::size_t c = 0; c <= top[l]; ++c) out[c] = filter_value(static_cast<std::uint32_t>(c), gammas[g], w);
    }
  return t;
}

std::vector<double> FlyCvEvaluator::scoring_scales(FilterScoring scoring, const PowerTable& table,
                                                   std::size_t G, const std::vector<std::uint32_t>& counts,
                                                   std::uint32_t m) const {
  const std::size_t L = data_.classes.size();
  std::vector<double> out(G * L, 1.0);
  if (scoring == FilterScoring::Absolute) return out;
  for (std::size_t g = 0; g < G; ++g) {
    const double* pw = table.power.data() + g * table.block;
    const std::vector<double> s = relative_scales(m, L, [&](std::uint32_t i, std::size_t l) {
      return pw[table.offsets[l] + counts[std::size_t(i) * L + l]];
    });
    std::copy(s.begin(), s.end(), out.begin() + static_cast<std::ptrdiff_t>(g * L));
  }
  return out;
}

std::vector<double> FlyCvEvaluator::fold_weights(const FlyConfig& config, std::uint32_t fold) const {
  if (config.class_weight.is_none()) return {};
  // The training rows of each class: the counts' mass / ρ, which ClassWeight::weights reads.
  std::vector<std::uint64_t> rows = rows_per_class(data_.labels, data_.classes.size());
  for (std::size_t r : test_rows_[fold]) --rows[data_.labels[r]];
  return config.class_weight.weights_for_sizes(data_.classes.names(), {rows.begin(), rows.end()});
}

std::vector<double> FlyCvEvaluator::out_of_fold_scores(const FlyConfig& config, int threads,
                                                       const ProgressFn& progress) const {
  if (!(config.gamma >= 0.0 && config.gamma < 1.0))
    throw Error(fmt::format("gamma = {}: must be in [0, 1)", config.gamma));
  const std::size_t n = data_.n_rows, L = data_.classes.size();
  const std::uint32_t rho = config.rho;
  std::vector<double> scores(n * L, 0.0);
  if (per_fold(config)) {
    // Each fold's model scores its test rows, as evaluate() does.
    const std::uint32_t per_row = config.codes_per_row();
    for_each_fold_counts(config, threads, progress,
                         [&](std::uint32_t f, const std::vector<std::uint32_t>& codes, const ClassCounts& counts) {
                           const FilterScorer scorer(counts, config, config.gamma, fold_weights(config, f));
                           for (std::size_t r : test_rows_[f])
                             scorer.score(codes.data() + r * per_row, scores.data() + r * L);
                         });
    return scores;
  }
  std::vector<std::uint32_t> winners, counts;
  hash_and_count(config, threads, progress, winners, counts);
  const int workers = detail::resolve_threads(threads);
  PowerTable table = gamma_powers({config.gamma}, {});
  for (std::uint32_t f = 0; f < k_; ++f) {
    const std::vector<std::size_t>& rows = test_rows_[f];
    if (!config.class_weight.is_none()) table = gamma_powers({config.gamma}, fold_weights(config, f));
    update_counts(rows, winners, rho, -1, counts);  // counts now hold the training folds only
    const std::vector<double> scale = scoring_scales(config.filter_scoring, table, 1, counts, config.m);
    const std::size_t chunks = (rows.size() + kScoreChunk - 1) / kScoreChunk;
    detail::parallel_for(chunks, workers, [&](std::size_t chunk, int) {
      const std::size_t end = std::min(rows.size(), (chunk + 1) * kScoreChunk);
      for (std::size_t i = chunk * kScoreChunk; i < end; ++i) {
        const std::size_t r = rows[i];
        const std::uint32_t* w = winners.data() + r * rho;
        double* out = scores.data() + r * L;
        // Same terms (value × scale) and summation order (winner by winner) as
        // FilterScorer's, so the scores equal the fold model's to the last bit.
        for (std::uint32_t t = 0; t < rho; ++t) {
          const std::uint32_t* c = counts.data() + std::size_t(w[t]) * L;
          for (std::size_t l = 0; l < L; ++l) out[l] += table.power[table.offsets[l] + c[l]] * scale[l];
        }
      }
    });
    update_counts(rows, winners, rho, +1, counts);
  }
  return scores;
}

std::vector<CvResult> FlyCvEvaluator::evaluate(const FlyConfig& config, const std::vector<double>& gammas,
                                               int threads, const ProgressFn& progress,
                                               bool with_log_loss) const {
  const auto start = std::chrono::steady_clock::now();
  if (gammas.empty()) throw Error("FlyNN CV: no γ to evaluate");
  for (double g : gammas)
    if (!(g >= 0.0 && g < 1.0)) throw Error(fmt::format("gamma = {}: must be in [0, 1)", g));
  if (per_fold(config)) return evaluate_per_fold(config, gammas, threads, progress, with_log_loss, start);
  const std::size_t n = data_.n_rows, L = data_.classes.size();
  const std::uint32_t rho = config.rho;
  std::vector<std::uint32_t> winners, counts;
  hash_and_count(config, threads, progress, winners, counts);
  const std::size_t G = gammas.size();
  PowerTable table = gamma_powers(gammas, {});

  const int workers = detail::resolve_threads(threads);
  std::vector<std::uint32_t> predicted(G * n, 0);  // γ-major: predicted[g·n + r]
  std::vector<double> kept(with_log_loss ? G * n * L : 0);  // γ-major scores, n × L per γ
  for (std::uint32_t f = 0; f < k_; ++f) {
    const std::vector<std::size_t>& rows = test_rows_[f];
    if (!config.class_weight.is_none()) table = gamma_powers(gammas, fold_weights(config, f));
    update_counts(rows, winners, rho, -1, counts);  // counts now hold the training folds only
    const std::vector<double> scales = scoring_scales(config.filter_scoring, table, G, counts, config.m);
    const std::size_t chunks = (rows.size() + kScoreChunk - 1) / kScoreChunk;
    detail::parallel_for(chunks, workers, [&](std::size_t chunk, int) {
      std::vector<double> scores(L);
      const std::size_t end = std::min(rows.size(), (chunk + 1) * kScoreChunk);
      for (std::size_t i = chunk * kScoreChunk; i < end; ++i) {
        const std::size_t r = rows[i];
        const std::uint32_t* w = winners.data() + r * rho;
        for (std::size_t g = 0; g < G; ++g) {
          const double* pw = table.power.data() + g * table.block;
          const double* scale = scales.data() + g * L;
          std::fill(scores.begin(), scores.end(), 0.0);
          for (std::uint32_t t = 0; t < rho; ++t) {
            const std::uint32_t* c = counts.data() + std::size_t(w[t]) * L;
            for (std::size_t l = 0; l < L; ++l) scores[l] += pw[table.offsets[l] + c[l]] * scale[l];
          }
          predicted[g * n + r] = argmin_class(scores.data(), L);
          if (with_log_loss) std::copy(scores.begin(), scores.end(), kept.begin() + (g * n + r) * L);
        }
      }
    });
    update_counts(rows, winners, rho, +1, counts);
  }
  return results_per_gamma(config, predicted, kept, G, threads, detail::seconds_since(start));
}

void FlyCvEvaluator::for_each_fold_counts(const FlyConfig& config, int threads, const ProgressFn& progress,
                                          const FoldVisitor& visit) const {
  const std::size_t n = data_.n_rows, L = data_.classes.size();
  const std::uint32_t per_row = config.codes_per_row();
  const bool standardize = config.variant.standardize;
  FlyHasher hasher(config, threads);
  const PairCoder coder(config);
  // Exact per-fold feature sums: a fold's training statistics are the sum over the other
  // folds, as central training on those rows would compute them.
  std::vector<FeatureSums> fold_sums(standardize ? k_ : 0, FeatureSums(static_cast<std::uint32_t>(data_.n_features), config.value_transform));
  for (std::size_t r = 0; r < n && standardize; ++r)
    fold_sums[fold_of_row_[r]].add_row(data_.features.data() + r * data_.n_features);
  std::vector<std::uint32_t> winners(n * config.rho), codes;
  const auto hash_rows = [&](const ProgressFn& report) {
    hasher.hash(data_.features.data(), n, winners.data(), threads, report);
    if (!coder.active()) return;
    // Codes in parallel chunks (each row's are a function of its winners alone).
    codes.resize(n * per_row);
    const std::size_t chunks = (n + kScoreChunk - 1) / kScoreChunk;
    std::vector<PairCoder::Scratch> scratch(static_cast<std::size_t>(detail::resolve_threads(threads)));
    detail::parallel_for(chunks, detail::resolve_threads(threads), [&](std::size_t chunk, int worker) {
      const std::size_t end = std::min(n, (chunk + 1) * kScoreChunk);
      for (std::size_t r = chunk * kScoreChunk; r < end; ++r)
        coder.row_codes(winners.data() + r * config.rho, codes.data() + r * per_row,
                        scratch[static_cast<std::size_t>(worker)]);
    });
  };
  if (!standardize) hash_rows(progress);
  for (std::uint32_t f = 0; f < k_; ++f) {
    if (test_rows_[f].empty()) continue;
    if (standardize) {
      FeatureSums train(static_cast<std::uint32_t>(data_.n_features), config.value_transform);
      for (std::uint32_t g = 0; g < k_; ++g)
        if (g != f) train += fold_sums[g];
      if (train.rows() == 0) continue;
      hasher.set_feature_stats(train.stats());
      hash_rows(f == 0 ? progress : ProgressFn{});
    }
    const std::vector<std::uint32_t>& row_codes = coder.active() ? codes : winners;
    ClassCounts counts(L, config.cells());
    for (std::size_t r = 0; r < n; ++r)
      if (fold_of_row_[r] != f) counts.add_row(data_.labels[r], row_codes.data() + r * per_row, per_row);
    visit(f, row_codes, counts);
  }
}

std::vector<CvResult> FlyCvEvaluator::evaluate_per_fold(
    const FlyConfig& config, const std::vector<double>& gammas, int threads,
    const ProgressFn& progress, bool with_log_loss, std::chrono::steady_clock::time_point start) const {
  const std::size_t L = data_.classes.size(), G = gammas.size();
  const std::uint32_t per_row = config.codes_per_row();
  const std::size_t n = data_.n_rows;
  std::vector<std::uint32_t> predicted(G * n, 0);  // γ-major: predicted[g·n + r]
  std::vector<double> kept(with_log_loss ? G * n * L : 0);  // γ-major scores, n × L per γ
  for_each_fold_counts(config, threads, progress,
                       [&](std::uint32_t f, const std::vector<std::uint32_t>& codes, const ClassCounts& counts) {
                               const std::vector<double> weights = fold_weights(config, f);
                               std::vector<double> scores(L);
                               for (std::size_t g = 0; g < G; ++g) {
                                 const FilterScorer scorer(counts, config, gammas[g], weights);
                                 for (std::size_t r : test_rows_[f]) {
                                   scorer.score(codes.data() + r * per_row, scores.data());
                                   predicted[g * n + r] = argmin_class(scores.data(), L);
                                   if (with_log_loss)
                                     std::copy(scores.begin(), scores.end(), kept.begin() + (g * n + r) * L);
                                 }
                               }
                             });
  return results_per_gamma(config, predicted, kept, G, threads, detail::seconds_since(start));
}

}  // namespace flynn::eval
