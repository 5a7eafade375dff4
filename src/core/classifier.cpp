#include "flynn/classifier.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/random.hpp"

namespace flynn {

FlyNN::FlyNN(const FlyConfig& config, LabelSet labels, int threads)
    : FlyNN(config, labels, ClassCounts(labels.size(), config.m), threads) {}

FlyNN::FlyNN(const FlyConfig& config, LabelSet labels, ClassCounts counts, int threads)
    : labels_(std::move(labels)), counts_(std::move(counts)), threads_(threads) {
  if (labels_.size() < 1) throw Error("a model needs at least one class label");
  config.validate(labels_.size());
  if (counts_.n_classes() != labels_.size() || counts_.m() != config.m)
    throw Error(fmt::format("counts of shape {}×{} do not match {} classes × m = {}",
                            counts_.n_classes(), counts_.m(), labels_.size(), config.m));
  hasher_ = std::make_unique<FlyHasher>(config, threads_);
}

FlyNN::FlyNN(FlyNN&&) noexcept = default;
FlyNN& FlyNN::operator=(FlyNN&&) noexcept = default;
FlyNN::~FlyNN() = default;

void FlyNN::set_counts(ClassCounts counts) {
  if (counts.n_classes() != labels_.size() || counts.m() != config().m)
    throw Error(fmt::format("counts of shape {}×{} do not match {} classes × m = {}",
                            counts.n_classes(), counts.m(), labels_.size(), config().m));
  counts_ = std::move(counts);
}

void FlyNN::check_features(const Dataset& data) const {
  if (data.n_features != config().input_dim)
    throw Error(fmt::format("{}: {} features per row, but the model expects {}", data.source,
                            data.n_features, config().input_dim));
}

std::vector<std::uint32_t> FlyNN::class_map(const Dataset& data) const {
  if (!data.has_labels) throw Error(fmt::format("{}: the data has no labels", data.source));
  return data.class_ids_in(labels_);
}

void FlyNN::set_feature_stats(FeatureStats stats) {
  if (!config().variant.standardize) {
    hasher_->set_feature_stats(stats);  // checks the size only
    return;
  }
  hasher_->set_feature_stats(stats);
  stats_ = std::move(stats);
}

void FlyNN::set_temperature(double t) {
  if (!(t > 0.0) || !std::isfinite(t))
    throw Error(fmt::format("temperature = {}: must be a finite positive number", t));
  temperature_ = t;
}

void FlyNN::learn_feature_stats(const Dataset& data) {
  if (!config().variant.standardize) return;
  check_features(data);
  set_feature_stats(FeatureSums::of(data).stats());
}

ClassCounts FlyNN::count(const Dataset& data, const ProgressFn& progress) const {
  check_features(data);
  const std::vector<std::uint32_t> map = class_map(data);
  const int workers = resolve_threads(threads_);
  std::vector<ClassCounts> partial;
  partial.reserve(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w) partial.emplace_back(labels_.size(), config().m);
  const std::uint32_t rho = config().rho;
  hasher_->hash_stream(
      data.features.data(), data.n_rows, workers,
      [&](int worker, std::size_t first, std::size_t n, const std::uint32_t* winners) {
        ClassCounts& c = partial[static_cast<std::size_t>(worker)];
        for (std::size_t r = 0; r < n; ++r)
          c.add_row(map[data.labels[first + r]], winners + r * rho, rho);
      },
      progress);
  ClassCounts total(labels_.size(), config().m);
  for (const ClassCounts& c : partial) total += c;
  return total;
}

void FlyNN::fit(const Dataset& data, const ProgressFn& progress) {
  const FeatureStats previous = stats_;
  learn_feature_stats(data);
  try {
    ClassCounts fresh = count(data, progress);
    counts_ = std::move(fresh);
  } catch (...) {  // e.g. an unknown label: leave the model as it was
    if (config().variant.standardize && !previous.empty()) set_feature_stats(previous);
    throw;
  }
}

void FlyNN::partial_fit(const Dataset& data, const ProgressFn& progress) {
  if (config().variant.standardize && stats_.empty()) {
    learn_feature_stats(data);
    try {
      counts_ += count(data, progress);
    } catch (...) {  // the model learned nothing: it has no statistics either
      stats_ = FeatureStats{};
      hasher_ = std::make_unique<FlyHasher>(config(), threads_);
      throw;
    }
    return;
  }
  counts_ += count(data, progress);
}

void FlyNN::forget(const Dataset& data, const ProgressFn& progress) {
  if (provenance_.differentially_private)
    throw Error("cannot forget rows of a differentially private model: its counts are noisy");
  counts_ -= count(data, progress);
}

void FlyNN::merge(const FlyNN& other) {
  const std::string diff = config().first_difference(other.config());
  if (!diff.empty())
    throw Error(fmt::format("cannot merge models whose {} differ ({} vs {})", diff,
                            config().describe(), other.config().describe()));
  if (labels_ != other.labels_)
    throw Error(fmt::format("cannot merge models with different label lists ({} vs {})",
                            labels_.joined(), other.labels_.joined()));
  if (provenance_.differentially_private || other.provenance_.differentially_private)
    throw Error("cannot merge differentially private models: combine DP releases with "
                "federated aggregation, which accounts for the privacy budget");
  if (stats_ != other.stats_)
    throw Error(fmt::format("cannot merge models whose feature statistics differ (variant {} "
                            "standardises with training statistics: train the parts after "
                            "set_feature_stats with the statistics of all rows)",
                            variant_name(config().variant)));
  counts_ += other.counts_;
}

std::vector<double> FlyNN::scores(const Dataset& data, const PredictOptions& options) const {
  check_features(data);
  const std::size_t L = labels_.size();
  const std::uint32_t rho = config().rho;
  const FilterScorer scorer(counts_, config().gamma, rho);
  std::vector<double> out(data.n_rows * L);
  hasher_->hash_stream(
      data.features.data(), data.n_rows, options.threads ? options.threads : threads_,
      [&](int, std::size_t first, std::size_t n, const std::uint32_t* winners) {
        for (std::size_t r = 0; r < n; ++r)
          scorer.score(winners + r * rho, out.data() + (first + r) * L);
      },
      options.progress);
  return out;
}

std::vector<std::uint32_t> FlyNN::predict(const Dataset& data,
                                          const PredictOptions& options) const {
  const std::size_t L = labels_.size();
  const std::vector<double> s = scores(data, options);
  std::vector<std::uint32_t> out(data.n_rows);
  std::vector<std::uint32_t> tied;
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    const double* row = s.data() + r * L;
    const double best = *std::min_element(row, row + L);
    tied.clear();
    for (std::size_t l = 0; l < L; ++l)
      if (row[l] == best) tied.push_back(static_cast<std::uint32_t>(l));
    if (tied.size() == 1 || options.tie_break == TieBreak::LowestClass) {
      out[r] = tied.front();
    } else {
      SeededRng rng = SeededRng::keyed(options.tie_seed, RngStream::PredictTieBreak, r);
      out[r] = tied[rng.uniform_below(tied.size())];
    }
  }
  return out;
}

std::vector<double> FlyNN::predict_proba(const Dataset& data,
                                         const PredictOptions& options) const {
  const std::size_t L = labels_.size();
  std::vector<double> s = scores(data, options);
  std::vector<double> p(s.size());
  for (std::size_t r = 0; r < data.n_rows; ++r)
    scores_to_probabilities(s.data() + r * L, L, config().rho, p.data() + r * L, temperature_);
  return p;
}

}  // namespace flynn
