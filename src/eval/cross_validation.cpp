#include "flynn/eval/cross_validation.hpp"

#include "flynn/detail/cpu_time.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "flynn/fly_hasher.hpp"
#include "flynn/metrics.hpp"
#include "flynn/pair_codes.hpp"
#include "flynn/scoring.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/random.hpp"

namespace flynn::eval {

std::vector<std::uint32_t> stratified_folds(const std::vector<std::uint32_t>& labels,
                                            std::size_t n_classes, std::uint32_t k,
                                            std::uint64_t seed) {
  if (k < 2) throw Error(fmt::format("folds = {}: must be at least 2", k));
  if (k > labels.size())
    throw Error(fmt::format("folds = {}: more folds than the {} rows", k, labels.size()));
  std::vector<std::vector<std::size_t>> by_class(n_classes);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    FLYNN_ASSERT(labels[r] < n_classes);
    by_class[labels[r]].push_back(r);
  }
  SeededRng rng = SeededRng::keyed(seed, RngStream::Folds, 0);
  std::vector<std::uint32_t> fold(labels.size());
  std::uint32_t next = 0;
  for (auto& rows : by_class) {
    for (std::size_t i = rows.size(); i > 1; --i) {
      const std::size_t j = rng.uniform_below(i);
      std::swap(rows[i - 1], rows[j]);
    }
    for (std::size_t r : rows) {
      fold[r] = next;
      next = (next + 1) % k;
    }
  }
  return fold;
}

std::vector<FoldRows> fold_rows(const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k) {
  std::vector<FoldRows> out(k);
  for (std::size_t r = 0; r < fold_of_row.size(); ++r) {
    for (std::uint32_t f = 0; f < k; ++f) {
      (fold_of_row[r] == f ? out[f].test : out[f].train).push_back(r);
    }
  }
  return out;
}

CvResult summarize_folds(std::vector<double> acc, double seconds) {
  CvResult r;
  r.fold_accuracy = std::move(acc);
  r.seconds = seconds;
  const double n = static_cast<double>(r.fold_accuracy.size());
  if (n == 0) return r;
  r.mean = std::accumulate(r.fold_accuracy.begin(), r.fold_accuracy.end(), 0.0) / n;
  double ss = 0.0;
  for (double a : r.fold_accuracy) ss += (a - r.mean) * (a - r.mean);
  r.sd = n > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  return r;
}

CvResult summarize_fold_metrics(std::vector<double> acc, std::vector<double> balanced, std::vector<double> macro,
                                double seconds) {
  CvResult r = summarize_folds(std::move(acc), seconds);
  const auto mean = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  r.balanced_accuracy = mean(balanced);
  r.macro_f1 = mean(macro);
  r.fold_balanced_accuracy = std::move(balanced);
  r.fold_macro_f1 = std::move(macro);
  return r;
}

CvResult summarize_predictions(const std::vector<std::uint32_t>& truth, const std::vector<std::uint32_t>& predicted,
                               const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                               std::size_t n_classes, double seconds) {
  if (truth.size() != predicted.size() || truth.size() != fold_of_row.size())
    throw Error(fmt::format("fold summary: {} labels, {} predictions, {} fold ids", truth.size(),
                            predicted.size(), fold_of_row.size()));
  std::vector<std::vector<std::uint32_t>> t(k), p(k);
  for (std::size_t r = 0; r < truth.size(); ++r) {
    if (fold_of_row[r] >= k) throw Error(fmt::format("fold id {} ≥ k = {}", fold_of_row[r], k));
    t[fold_of_row[r]].push_back(truth[r]);
    p[fold_of_row[r]].push_back(predicted[r]);
  }
  std::vector<double> acc(k, 0.0), balanced(k, 0.0), macro(k, 0.0);
  for (std::uint32_t f = 0; f < k; ++f) {
    acc[f] = accuracy(t[f], p[f]);
    if (t[f].empty()) continue;
    balanced[f] = balanced_accuracy(t[f], p[f], n_classes);
    macro[f] = macro_f1(t[f], p[f], n_classes);
  }
  return summarize_fold_metrics(std::move(acc), std::move(balanced), std::move(macro), seconds);
}

CvMetric parse_cv_metric(const std::string& name) {
  if (name == "accuracy") return CvMetric::Accuracy;
  if (name == "balanced_accuracy") return CvMetric::BalancedAccuracy;
  if (name == "macro_f1") return CvMetric::MacroF1;
  if (name == "log_loss") return CvMetric::LogLoss;
  throw Error(fmt::format("metric '{}': expected accuracy, balanced_accuracy, macro_f1 or log_loss", name));
}

const char* cv_metric_name(CvMetric m) {
  switch (m) {
    case CvMetric::Accuracy:
      return "accuracy";
    case CvMetric::BalancedAccuracy:
      return "balanced_accuracy";
    case CvMetric::MacroF1:
      return "macro_f1";
    case CvMetric::LogLoss:
      return "log_loss";
  }
  return "accuracy";
}

double CvResult::metric(CvMetric m) const {
  switch (m) {
    case CvMetric::Accuracy:
      return mean;
    case CvMetric::BalancedAccuracy:
      return balanced_accuracy;
    case CvMetric::MacroF1:
      return macro_f1;
    case CvMetric::LogLoss:
      return -log_loss;
  }
  return mean;
}

std::vector<CvResult> cross_validate_flynn_gammas(const Dataset& data, const FlyConfig& config,
                                                  const std::vector<double>& gammas,
                                                  const std::vector<std::uint32_t>& fold_of_row,
                                                  std::uint32_t k, int threads,
                                                  const ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (!data.has_labels) throw Error(fmt::format("{}: cross-validation needs labels", data.source));
  if (fold_of_row.size() != data.n_rows) throw Error("fold assignment does not match the rows");
  const std::size_t L = data.classes.size();
  config.validate(L);
  const FlyHasher hasher(config, threads);
  const std::uint32_t per_row = config.codes_per_row();
  // One hashing pass: codes of every row (its winners, and its pair cells), and the counts
  // of each fold.
  std::vector<std::uint32_t> winners(data.n_rows * config.rho);
  hasher.hash(data.features.data(), data.n_rows, winners.data(), threads, progress);
  PairCoder::Scratch scratch;
  const std::uint32_t* codes = PairCoder(config).block_codes(winners.data(), data.n_rows, scratch);
  std::vector<ClassCounts> fold_counts(k, ClassCounts(L, config.cells()));
  ClassCounts total(L, config.cells());
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    fold_counts[fold_of_row[r]].add_row(data.labels[r], codes + r * per_row, per_row);
    total.add_row(data.labels[r], codes + r * per_row, per_row);
  }
  const double hash_seconds =
      detail::seconds_since(start);

  std::vector<CvResult> results;
  std::vector<double> scores(L);
  for (double gamma : gammas) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::uint32_t> predicted(data.n_rows, 0);
    for (std::uint32_t f = 0; f < k; ++f) {
      ClassCounts train = total;
      train -= fold_counts[f];
      const FilterScorer scorer(train, config, gamma,
                                config.class_weight.weights(data.classes.names(), train, per_row));
      for (std::size_t r = 0; r < data.n_rows; ++r) {
        if (fold_of_row[r] != f) continue;
        scorer.score(codes + r * per_row, scores.data());
        predicted[r] = argmin_class(scores.data(), L);
      }
    }
    const double secs = hash_seconds + detail::seconds_since(t0);
    results.push_back(summarize_predictions(data.labels, predicted, fold_of_row, k, L, secs));
  }
  return results;
}

CvResult cross_validate_flynn(const Dataset& data, const FlyConfig& config,
                              const std::vector<std::uint32_t>& fold_of_row, std::uint32_t k,
                              int threads, const ProgressFn& progress) {
  config.validate(data.classes.size());
  return FlyCvEvaluator(data, fold_of_row, k).evaluate(config, {config.gamma}, threads, progress).front();
}

std::vector<std::size_t> stratified_subsample(const Dataset& data, double q, std::uint64_t seed) {
  if (!data.has_labels) throw Error(fmt::format("{}: a stratified subsample needs labels", data.source));
  const std::size_t L = data.classes.size();
  std::vector<std::vector<std::size_t>> by_class(L);
  for (std::size_t r = 0; r < data.n_rows; ++r) by_class[data.labels[r]].push_back(r);
  SeededRng rng = SeededRng::keyed(seed, RngStream::Search, 2);
  std::vector<std::size_t> keep;
  for (auto& rows : by_class) {
    flynn::shuffle(rows, rng);
    const auto take = static_cast<std::size_t>(std::ceil(q * static_cast<double>(rows.size()) - 1e-9));
    keep.insert(keep.end(), rows.begin(), rows.begin() + std::min(take, rows.size()));
  }
  std::sort(keep.begin(), keep.end());
  return keep;
}

}  // namespace flynn::eval
