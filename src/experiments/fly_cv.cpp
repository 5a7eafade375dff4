#include "flynn/experiments/fly_cv.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/class_counts.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/scoring.hpp"

namespace flynn::experiments {

std::uint64_t fly_cv_memory_bytes(const FlyConfig& c, std::size_t n_rows, std::size_t n_classes) {
  const std::uint64_t m = c.m, s = c.s, rho = c.rho;
  return m * s * 4 + std::uint64_t(n_classes) * m * 4 + std::uint64_t(n_rows) * rho * 4 +
         (std::uint64_t{1} << 20);
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

std::vector<CvResult> FlyCvEvaluator::evaluate(const FlyConfig& config, const std::vector<double>& gammas,
                                               int threads, const ProgressFn& progress) const {
  const auto start = std::chrono::steady_clock::now();
  if (gammas.empty()) throw Error("FlyNN CV: no γ to evaluate");
  for (double g : gammas)
    if (!(g >= 0.0 && g < 1.0)) throw Error(fmt::format("gamma = {}: must be in [0, 1)", g));
  if (config.variant.standardize) return evaluate_per_fold(config, gammas, threads, progress, start);
  const std::size_t n = data_.n_rows, L = data_.classes.size();
  const std::uint32_t m = config.m, rho = config.rho;
  const FlyHasher hasher(config, threads);
  std::vector<std::uint32_t> winners(n * rho);
  hasher.hash(data_.features.data(), n, winners.data(), threads, progress);

  // Unit-major counts of all rows: a winner's L counts are contiguous.
  std::vector<std::uint32_t> counts(std::size_t(m) * L, 0);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint32_t* w = winners.data() + r * rho;
    for (std::uint32_t t = 0; t < rho; ++t) ++counts[std::size_t(w[t]) * L + data_.labels[r]];
  }
  // γ^c exactly as filter_table computes it (c = 0 → 1, else std::pow), for c ≤ n.
  const std::size_t G = gammas.size();
  std::vector<double> power((n + 1) * G);
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t c = 0; c <= n; ++c)
      power[g * (n + 1) + c] = c == 0 ? 1.0 : std::pow(gammas[g], static_cast<double>(c));

  const int workers = resolve_threads(threads);
  std::vector<std::vector<std::size_t>> correct(k_, std::vector<std::size_t>(G, 0));
  for (std::uint32_t f = 0; f < k_; ++f) {
    const std::vector<std::size_t>& rows = test_rows_[f];
    auto update = [&](int delta) {
      for (std::size_t r : rows) {
        const std::uint32_t* w = winners.data() + r * rho;
        for (std::uint32_t t = 0; t < rho; ++t)
          counts[std::size_t(w[t]) * L + data_.labels[r]] += static_cast<std::uint32_t>(delta);
      }
    };
    update(-1);  // counts now hold the training folds only
    constexpr std::size_t kChunk = 256;
    const std::size_t chunks = (rows.size() + kChunk - 1) / kChunk;
    std::vector<std::vector<std::size_t>> local(static_cast<std::size_t>(workers),
                                                std::vector<std::size_t>(G, 0));
    parallel_for(chunks, workers, [&](std::size_t chunk, int worker) {
      std::vector<double> scores(L);
      std::vector<std::size_t>& hits = local[static_cast<std::size_t>(worker)];
      const std::size_t end = std::min(rows.size(), (chunk + 1) * kChunk);
      for (std::size_t i = chunk * kChunk; i < end; ++i) {
        const std::size_t r = rows[i];
        const std::uint32_t* w = winners.data() + r * rho;
        for (std::size_t g = 0; g < G; ++g) {
          const double* pw = power.data() + g * (n + 1);
          std::fill(scores.begin(), scores.end(), 0.0);
          for (std::uint32_t t = 0; t < rho; ++t) {
            const std::uint32_t* c = counts.data() + std::size_t(w[t]) * L;
            for (std::size_t l = 0; l < L; ++l) scores[l] += pw[c[l]];
          }
          hits[g] += argmin_class(scores.data(), L) == data_.labels[r];
        }
      }
    });
    for (const auto& h : local)
      for (std::size_t g = 0; g < G; ++g) correct[f][g] += h[g];
    update(+1);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<CvResult> out;
  for (std::size_t g = 0; g < G; ++g) {
    std::vector<double> acc(k_, 0.0);
    for (std::uint32_t f = 0; f < k_; ++f)
      acc[f] = test_rows_[f].empty() ? 0.0
                                     : static_cast<double>(correct[f][g]) / test_rows_[f].size();
    out.push_back(summarize_folds(std::move(acc), seconds));
  }
  return out;
}

std::vector<CvResult> FlyCvEvaluator::evaluate_per_fold(
    const FlyConfig& config, const std::vector<double>& gammas, int threads,
    const ProgressFn& progress, std::chrono::steady_clock::time_point start) const {
  const std::size_t n = data_.n_rows, L = data_.classes.size(), G = gammas.size();
  const std::uint32_t m = config.m, rho = config.rho;
  FlyHasher hasher(config, threads);
  // Exact per-fold feature sums: a fold's training statistics are the sum over the other
  // folds, as central training on those rows would compute them.
  std::vector<FeatureSums> fold_sums(k_, FeatureSums(static_cast<std::uint32_t>(data_.n_features)));
  for (std::size_t r = 0; r < n; ++r)
    fold_sums[fold_of_row_[r]].add_row(data_.features.data() + r * data_.n_features);
  std::vector<std::uint32_t> winners(n * rho);
  std::vector<std::vector<std::size_t>> correct(k_, std::vector<std::size_t>(G, 0));
  for (std::uint32_t f = 0; f < k_; ++f) {
    if (test_rows_[f].empty()) continue;
    FeatureSums train(static_cast<std::uint32_t>(data_.n_features));
    for (std::uint32_t g = 0; g < k_; ++g)
      if (g != f) train += fold_sums[g];
    if (train.rows() == 0) continue;
    hasher.set_feature_stats(train.stats());
    hasher.hash(data_.features.data(), n, winners.data(), threads, f == 0 ? progress : ProgressFn{});
    ClassCounts counts(L, m);
    for (std::size_t r = 0; r < n; ++r)
      if (fold_of_row_[r] != f) counts.add_row(data_.labels[r], winners.data() + r * rho, rho);
    for (std::size_t g = 0; g < G; ++g) {
      const FilterScorer scorer(counts, gammas[g], rho);
      std::vector<double> scores(L);
      for (std::size_t r : test_rows_[f]) {
        scorer.score(winners.data() + r * rho, scores.data());
        correct[f][g] += argmin_class(scores.data(), L) == data_.labels[r];
      }
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<CvResult> out;
  for (std::size_t g = 0; g < G; ++g) {
    std::vector<double> acc(k_, 0.0);
    for (std::uint32_t f = 0; f < k_; ++f)
      acc[f] = test_rows_[f].empty() ? 0.0
                                     : static_cast<double>(correct[f][g]) / test_rows_[f].size();
    out.push_back(summarize_folds(std::move(acc), seconds));
  }
  return out;
}

}  // namespace flynn::experiments
