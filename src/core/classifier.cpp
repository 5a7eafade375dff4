#include "flynn/classifier.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

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

void FlyNN::check_view(const DataView& rows) const {
  if (rows.n_cols() != config().input_dim)
    throw Error(fmt::format("{} features per row, but the model expects {}", rows.n_cols(),
                            config().input_dim));
}

void FlyNN::check_class_ids(std::size_t n_rows, std::span<const std::uint32_t> class_ids) const {
  if (class_ids.size() != n_rows)
    throw Error(fmt::format("{} class ids for {} rows: give one class id per row",
                            class_ids.size(), n_rows));
  for (std::size_t r = 0; r < class_ids.size(); ++r) {
    if (class_ids[r] >= labels_.size())
      throw Error(fmt::format("row {}: class id {} is not below the model's {} classes", r,
                              class_ids[r], labels_.size()));
  }
}

ClassCounts FlyNN::count(const Dataset& data, const ProgressFn& progress) const {
  check_features(data);
  const std::vector<std::uint32_t> map = class_map(data);
  std::vector<std::uint32_t> ids(data.n_rows);
  for (std::size_t r = 0; r < data.n_rows; ++r) ids[r] = map[data.labels[r]];
  return count_checked(DataView(data), ids, progress);
}

ClassCounts FlyNN::count(const DataView& rows, std::span<const std::uint32_t> class_ids,
                         const ProgressFn& progress) const {
  check_view(rows);
  check_class_ids(rows.n_rows(), class_ids);
  return count_checked(rows, class_ids, progress);
}

ClassCounts FlyNN::count_checked(const DataView& rows, std::span<const std::uint32_t> class_ids,
                                 const ProgressFn& progress) const {
  const int workers = resolve_threads(threads_);
  // One accumulator per worker that actually receives rows, made on its first block: a
  // small call (one row, say) on many threads allocates one L × m table, not one per
  // thread. Integer sums, so the order of the partial tables does not matter.
  std::vector<std::optional<ClassCounts>> partial(static_cast<std::size_t>(workers));
  const std::uint32_t rho = config().rho;
  hasher_->hash_stream(
      rows, workers,
      [&](int worker, std::size_t first, std::size_t n, const std::uint32_t* winners) {
        std::optional<ClassCounts>& c = partial[static_cast<std::size_t>(worker)];
        if (!c) c.emplace(labels_.size(), config().m);
        for (std::size_t r = 0; r < n; ++r) c->add_row(class_ids[first + r], winners + r * rho, rho);
      },
      progress);
  std::optional<ClassCounts> total;
  for (std::optional<ClassCounts>& c : partial) {
    if (!c) continue;
    if (total) {
      *total += *c;
    } else {
      total = std::move(c);
    }
  }
  return total ? std::move(*total) : ClassCounts(labels_.size(), config().m);
}

void FlyNN::fit(const Dataset& data, const ProgressFn& progress) {
  ClassCounts fresh = count(data, progress);
  counts_ = std::move(fresh);
}

void FlyNN::fit(const DataView& rows, std::span<const std::uint32_t> class_ids,
                const ProgressFn& progress) {
  ClassCounts fresh = count(rows, class_ids, progress);
  counts_ = std::move(fresh);
}

void FlyNN::partial_fit(const Dataset& data, const ProgressFn& progress) {
  counts_ += count(data, progress);
}

void FlyNN::partial_fit(const DataView& rows, std::span<const std::uint32_t> class_ids,
                        const ProgressFn& progress) {
  counts_ += count(rows, class_ids, progress);
}

namespace {
void require_exact_counts(const Provenance& provenance) {
  if (provenance.differentially_private)
    throw Error("cannot forget rows of a differentially private model: its counts are noisy");
}
}  // namespace

void FlyNN::forget(const Dataset& data, const ProgressFn& progress) {
  require_exact_counts(provenance_);
  counts_ -= count(data, progress);
}

void FlyNN::forget(const DataView& rows, std::span<const std::uint32_t> class_ids,
                   const ProgressFn& progress) {
  require_exact_counts(provenance_);
  counts_ -= count(rows, class_ids, progress);
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
  counts_ += other.counts_;
}

std::vector<double> FlyNN::scores(const Dataset& data, const PredictOptions& options) const {
  check_features(data);
  return scores_checked(DataView(data), options);
}

std::vector<double> FlyNN::scores(const DataView& rows, const PredictOptions& options) const {
  check_view(rows);
  return scores_checked(rows, options);
}

std::vector<double> FlyNN::scores_checked(const DataView& rows,
                                          const PredictOptions& options) const {
  const std::size_t L = labels_.size();
  const std::uint32_t rho = config().rho;
  const FilterScorer scorer(counts_, config().gamma, rho);
  std::vector<double> out(rows.n_rows() * L);
  hasher_->hash_stream(
      rows, options.threads ? options.threads : threads_,
      [&](int, std::size_t first, std::size_t n, const std::uint32_t* winners) {
        for (std::size_t r = 0; r < n; ++r)
          scorer.score(winners + r * rho, out.data() + (first + r) * L);
      },
      options.progress);
  return out;
}

std::vector<std::uint32_t> FlyNN::choose_classes(const std::vector<double>& s, std::size_t n,
                                                 const PredictOptions& options) const {
  const std::size_t L = labels_.size();
  std::vector<std::uint32_t> out(n);
  std::vector<std::uint32_t> tied;
  for (std::size_t r = 0; r < n; ++r) {
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

void FlyNN::to_probabilities(std::vector<double>& s, std::size_t n) const {
  const std::size_t L = labels_.size();
  std::vector<double> p(L);
  for (std::size_t r = 0; r < n; ++r) {
    scores_to_probabilities(s.data() + r * L, L, config().rho, p.data());
    std::copy(p.begin(), p.end(), s.begin() + static_cast<std::ptrdiff_t>(r * L));
  }
}

std::vector<std::uint32_t> FlyNN::predict(const Dataset& data,
                                          const PredictOptions& options) const {
  return choose_classes(scores(data, options), data.n_rows, options);
}

std::vector<std::uint32_t> FlyNN::predict(const DataView& rows,
                                          const PredictOptions& options) const {
  return choose_classes(scores(rows, options), rows.n_rows(), options);
}

std::vector<double> FlyNN::predict_proba(const Dataset& data,
                                         const PredictOptions& options) const {
  std::vector<double> s = scores(data, options);
  to_probabilities(s, data.n_rows);
  return s;
}

std::vector<double> FlyNN::predict_proba(const DataView& rows,
                                         const PredictOptions& options) const {
  std::vector<double> s = scores(rows, options);
  to_probabilities(s, rows.n_rows());
  return s;
}

}  // namespace flynn
