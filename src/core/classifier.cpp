#include "flynn/classifier.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/pair_codes.hpp"
#include "flynn/random.hpp"

namespace flynn {

FlyNN::FlyNN(const FlyConfig& config, LabelSet labels, int threads)
    : FlyNN(config, labels, ClassCounts(labels.size(), config.cells()), threads) {}

namespace {
// Throws unless `counts` has one row of config.cells() count cells per class.
void check_counts_shape(const ClassCounts& counts, std::size_t n_classes, const FlyConfig& config) {
  if (counts.n_classes() != n_classes || counts.m() != config.cells())
    throw Error(fmt::format("counts of shape {}×{} do not match {} classes × {} cells{}", counts.n_classes(),
                            counts.m(), n_classes, config.cells(),
                            config.pairs ? fmt::format(" (m = {} and {} pair cells)", config.m, config.pair_cells())
                                         : fmt::format(" (m = {})", config.m)));
}
}  // namespace

struct FlyNN::ScorerCache {
  std::mutex mutex;
  std::shared_ptr<const FilterScorer> scorer;  // none: not built since the counts changed
  std::vector<double> weights;  // the scorer's class_weights() ("balanced" reads all L·m counts)
  // The class priors of predict_proba, from those weights; likewise dropped with the counts.
  std::shared_ptr<const std::vector<double>> priors;
  void build(const FlyNN& model);
};

FlyNN::FlyNN(const FlyConfig& config, LabelSet labels, ClassCounts counts, int threads)
    : labels_(std::move(labels)),
      counts_(std::move(counts)),
      threads_(threads),
      scorer_cache_(std::make_unique<ScorerCache>()) {
  if (labels_.size() < 1) throw Error("a model needs at least one class label");
  config.validate();  // no memory guard: a model must load; training and prediction check
  check_counts_shape(counts_, labels_.size(), config);
  config.class_weight.check_classes(labels_.names());
  hasher_ = std::make_unique<FlyHasher>(config, threads_);
}

std::vector<double> FlyNN::class_weights() const {
  return config().class_weight.weights(labels_.names(), counts_, config().codes_per_row());
}

FlyNN::FlyNN(FlyNN&&) noexcept = default;
FlyNN& FlyNN::operator=(FlyNN&&) noexcept = default;
FlyNN::~FlyNN() = default;

// With the cache's mutex held: builds the scorer and its weights if the counts changed.
void FlyNN::ScorerCache::build(const FlyNN& model) {
  if (scorer) return;
  weights = model.class_weights();
  scorer = std::make_shared<const FilterScorer>(model.counts_, model.config(), model.config().gamma, weights);
}

std::shared_ptr<const FilterScorer> FlyNN::scorer() const {
  ScorerCache& cache = *scorer_cache_;
  const std::lock_guard<std::mutex> lock(cache.mutex);
  cache.build(*this);
  return cache.scorer;
}

std::shared_ptr<const std::vector<double>> FlyNN::class_priors_cached() const {
  ScorerCache& cache = *scorer_cache_;
  const std::lock_guard<std::mutex> lock(cache.mutex);
  cache.build(*this);  // the scorer's weights are the priors' too
  if (!cache.priors)
    cache.priors = std::make_shared<const std::vector<double>>(class_priors(counts_.rows_per_class(), cache.weights));
  return cache.priors;
}

void FlyNN::counts_changed() {
  const std::lock_guard<std::mutex> lock(scorer_cache_->mutex);
  scorer_cache_->scorer.reset();
  scorer_cache_->priors.reset();
}

void FlyNN::set_counts(ClassCounts counts) {
  check_counts_shape(counts, labels_.size(), config());
  counts_ = std::move(counts);
  counts_changed();
}

void FlyNN::check_features(const Dataset& data) const {
  if (data.n_features != config().input_dim)
    throw Error(fmt::format("{}: {} features per row, but the model expects {}", data.source,
                            data.n_features, config().input_dim));
}

std::vector<std::uint32_t> FlyNN::row_class_ids(const Dataset& data) const {
  if (!data.has_labels) throw Error(fmt::format("{}: the data has no labels", data.source));
  return data.row_class_ids_in(labels_);
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

void FlyNN::set_feature_stats(FeatureStats stats) {
  if (!config().variant.standardize) {
    hasher_->set_feature_stats(stats);  // checks the size only
    return;
  }
  hasher_->set_feature_stats(stats);
  stats_ = std::move(stats);
}

void FlyNN::set_temperature(double t) {
  Calibration c = calibration_;
  c.temperature = t;
  c.source = CalibrationSource::Given;
  c.rows = 0;
  set_calibration(c);
}

void FlyNN::set_calibration(const Calibration& calibration) {
  calibration.validate();
  calibration_ = calibration;
}

CalibrationLoss FlyNN::calibration_loss(const CalibrationSample& sample) const {
  const std::shared_ptr<const FilterScorer> built = scorer();  // builds the weights once
  std::vector<double> weights;
  {
    const std::lock_guard<std::mutex> lock(scorer_cache_->mutex);
    weights = scorer_cache_->weights;
  }
  return flynn::calibration_loss(counts_, config(), weights, sample, threads_);
}

std::vector<double> FlyNN::leave_one_out_scores(const DataView& rows, std::span<const std::uint32_t> class_ids,
                                                const PredictOptions& options) const {
  check_view(rows);
  check_class_ids(rows.n_rows(), class_ids);
  config().check_memory(labels_.size());
  const std::size_t L = labels_.size();
  const LeaveOneOutScorer scorer(counts_, config(), class_weights());
  const PairCoder coder(config());
  const int workers = detail::resolve_threads(options.threads ? options.threads : threads_);
  std::vector<PairCoder::Scratch> scratch(static_cast<std::size_t>(workers));
  const std::uint32_t per_row = coder.codes_per_row();
  std::vector<double> out(rows.n_rows() * L);
  hasher_->hash_stream(
      rows, workers,
      [&](int worker, std::size_t first, std::size_t n, const std::uint32_t* winners) {
        const std::uint32_t* codes = coder.block_codes(winners, n, scratch[static_cast<std::size_t>(worker)]);
        for (std::size_t r = 0; r < n; ++r)
          scorer.score(codes + r * per_row, class_ids[first + r], out.data() + (first + r) * L);
      },
      options.progress);
  return out;
}

void FlyNN::calibrate(const CalibrationSample& sample) {
  const CalibrationLoss loss = calibration_loss(sample);
  set_calibration(choose_calibration(loss.totals(), loss.rows()));
}

void FlyNN::learn_feature_stats(const DataView& rows) {
  if (!config().variant.standardize) return;
  check_view(rows);
  // The same exact integer sums as FeatureSums::of(Dataset), over float or byte rows.
  FeatureSums sums(config().input_dim, config().value_transform);
  std::vector<float> widened(rows.n_cols());
  for (std::size_t r = 0; r < rows.n_rows(); ++r) {
    if (const float* f = rows.floats()) {
      sums.add_row(f + r * rows.row_stride());
    } else {
      const std::uint8_t* b = rows.bytes() + r * rows.row_stride();
      for (std::size_t j = 0; j < widened.size(); ++j) widened[j] = static_cast<float>(b[j]);
      sums.add_row(widened.data());
    }
  }
  set_feature_stats(sums.stats());
}

ClassCounts FlyNN::count(const Dataset& data, const ProgressFn& progress, CalibrationSample* sample) const {
  check_features(data);
  return count_checked(DataView(data), row_class_ids(data), progress, sample);
}

ClassCounts FlyNN::count(const DataView& rows, std::span<const std::uint32_t> class_ids,
                         const ProgressFn& progress, CalibrationSample* sample) const {
  check_view(rows);
  check_class_ids(rows.n_rows(), class_ids);
  return count_checked(rows, class_ids, progress, sample);
}

ClassCounts FlyNN::count_checked(const DataView& rows, std::span<const std::uint32_t> class_ids,
                                 const ProgressFn& progress, CalibrationSample* sample) const {
  config().check_memory(labels_.size());
  const int workers = detail::resolve_threads(threads_);
  // One accumulator per worker that actually receives rows, made on its first block: a
  // small call (one row, say) on many threads allocates one L × m table, not one per
  // thread. Integer sums, so the order of the partial tables does not matter.
  std::vector<std::optional<ClassCounts>> partial(static_cast<std::size_t>(workers));
  const PairCoder coder(config());
  std::vector<PairCoder::Scratch> scratch(static_cast<std::size_t>(workers));
  // The calibration sample's rows, per worker (a sample holds rows as a set: the merge
  // below gives the same sample for any thread count).
  std::vector<CalibrationSample> picked(sample ? static_cast<std::size_t>(workers) : 0,
                                        sample ? sample->emptied() : CalibrationSample{});
  // Room for a little more than a worker's even share of the sample, so filling it does
  // not copy the codes again and again (capacity only: pages are touched as rows arrive).
  const std::uint64_t sampled = sample ? std::min<std::uint64_t>(sample->expected_rows(), rows.n_rows()) : 0;
  const std::size_t sample_room = static_cast<std::size_t>(sampled / workers + sampled / (4 * workers) + 64);
  for (CalibrationSample& p : picked) p.reserve(sample_room);
  const std::uint32_t per_row = coder.codes_per_row();
  hasher_->hash_stream(
      rows, workers,
      [&](int worker, std::size_t first, std::size_t n, const std::uint32_t* winners) {
        std::optional<ClassCounts>& c = partial[static_cast<std::size_t>(worker)];
        if (!c) c.emplace(labels_.size(), config().cells());
        const std::uint32_t* codes = coder.block_codes(winners, n, scratch[static_cast<std::size_t>(worker)]);
        for (std::size_t r = 0; r < n; ++r) c->add_row(class_ids[first + r], codes + r * per_row, per_row);
        if (!sample) return;
        CalibrationSample& mine = picked[static_cast<std::size_t>(worker)];
        for (std::size_t r = 0; r < n; ++r)
          if (mine.wants(class_ids[first + r], codes + r * per_row)) mine.add(class_ids[first + r], codes + r * per_row);
      },
      progress);
  for (CalibrationSample& p : picked) sample->merge(std::move(p));
  std::optional<ClassCounts> total;
  for (std::optional<ClassCounts>& c : partial) {
    if (!c) continue;
    if (total) {
      *total += *c;
    } else {
      total = std::move(c);
    }
  }
  return total ? std::move(*total) : ClassCounts(labels_.size(), config().cells());
}

namespace {
// A call of at most this fraction of the count table's cells in codes adds them in place:
// counting them into a fresh table of L × cells first and adding that whole costs about
// 1 ms at the Fashion-MNIST shapes (5 MB of counts written twice, read once), against
// about 0.2 ms to hash one row.
constexpr std::uint64_t kInPlaceCellsPerCode = 64;
}  // namespace

void FlyNN::add_counts(const DataView& rows, std::span<const std::uint32_t> class_ids,
                       const ProgressFn& progress) {
  check_view(rows);
  check_class_ids(rows.n_rows(), class_ids);
  const PairCoder coder(config());
  const std::uint64_t per_row = coder.codes_per_row(), cells = config().cells();
  if (std::uint64_t(rows.n_rows()) * per_row * kInPlaceCellsPerCode > labels_.size() * cells) {
    counts_ += count_checked(rows, class_ids, progress, nullptr);
    return;
  }
  // The rows' cells (class · cells + code), then each count checked before any is added.
  std::vector<std::uint64_t> hits;
  hits.reserve(rows.n_rows() * per_row);
  std::mutex mutex;
  PairCoder::Scratch scratch;
  hasher_->hash_stream(
      rows, threads_,
      [&](int, std::size_t first, std::size_t n, const std::uint32_t* winners) {
        const std::lock_guard<std::mutex> lock(mutex);
        const std::uint32_t* codes = coder.block_codes(winners, n, scratch);
        for (std::size_t r = 0; r < n; ++r)
          for (std::uint64_t k = 0; k < per_row; ++k)
            hits.push_back(class_ids[first + r] * cells + codes[r * per_row + k]);
      },
      progress);
  std::sort(hits.begin(), hits.end());
  std::vector<std::uint32_t>& values = counts_.values();
  for (std::size_t i = 0, j = 0; i < hits.size(); i = j) {
    while (j < hits.size() && hits[j] == hits[i]) ++j;
    if (values[hits[i]] > std::numeric_limits<std::uint32_t>::max() - (j - i))
      throw Error(fmt::format("count overflow: class {} unit {} would exceed 2^32-1",
                              hits[i] / cells, hits[i] % cells));
  }
  for (std::uint64_t h : hits) ++values[h];
  for (std::uint32_t c : class_ids) ++counts_.rows_per_class()[c];
}

namespace {
// The rules of a model whose counts are a differentially private release (Provenance):
// rows can neither be added exactly nor removed. Adding would void the ε the model claims
// (the new rows' counts carry no noise), removing cannot be exact (the counts are noisy).
void require_exact_counts(const Provenance& provenance) {
  if (provenance.differentially_private)
    throw Error("cannot forget rows of a differentially private model: its counts are noisy");
}
void require_no_release(const Provenance& provenance) {
  if (provenance.differentially_private)
    throw Error(fmt::format(
        "cannot learn rows into a differentially private model (epsilon={}): rows added "
        "without noise would not be covered by its epsilon; train a new model (fit) or "
        "release again with federated training",
        provenance.epsilon));
}
}  // namespace

void FlyNN::fit_counts(const DataView& rows, std::span<const std::uint32_t> class_ids,
                       const ProgressFn& progress) {
  CalibrationSample sample(config(), rows.n_rows());
  ClassCounts fresh = count(rows, class_ids, progress, &sample);
  counts_ = std::move(fresh);
  counts_changed();
  provenance_ = Provenance{};  // exact counts of these rows now, whatever was released before
  calibrate(sample);
}

void FlyNN::fit(const Dataset& data, const ProgressFn& progress) {
  const FeatureStats previous = stats_;
  check_features(data);
  learn_feature_stats(DataView(data));
  try {
    fit_counts(DataView(data), row_class_ids(data), progress);
  } catch (...) {  // e.g. an unknown label: leave the model as it was
    if (config().variant.standardize && !previous.empty()) set_feature_stats(previous);
    throw;
  }
}

void FlyNN::fit(const DataView& rows, std::span<const std::uint32_t> class_ids,
                const ProgressFn& progress) {
  const FeatureStats previous = stats_;
  learn_feature_stats(rows);
  try {
    fit_counts(rows, class_ids, progress);
  } catch (...) {  // e.g. a bad class id: leave the model as it was
    if (config().variant.standardize && !previous.empty()) set_feature_stats(previous);
    throw;
  }
}

void FlyNN::partial_fit(const Dataset& data, const ProgressFn& progress, CalibrationSample* sample) {
  // The rows form, after the Dataset's own checks (the source named in the message).
  require_no_release(provenance_);
  check_features(data);
  partial_fit(DataView(data), row_class_ids(data), progress, sample);
}

void FlyNN::partial_fit(const DataView& rows, std::span<const std::uint32_t> class_ids,
                        const ProgressFn& progress, CalibrationSample* sample) {
  require_no_release(provenance_);
  // The rows go into the sample only once they are learned.
  CalibrationSample taken = sample ? sample->emptied() : CalibrationSample{};
  // Without a sample to fill, add_counts adds a few rows' codes in place (one-row updates).
  const auto learn = [&] {
    if (sample) counts_ += count(rows, class_ids, progress, &taken);
    else add_counts(rows, class_ids, progress);
  };
  if (config().variant.standardize && stats_.empty()) {
    learn_feature_stats(rows);
    try {
      learn();
      counts_changed();
    } catch (...) {  // the model learned nothing: it has no statistics either
      stats_ = FeatureStats{};
      hasher_ = std::make_unique<FlyHasher>(config(), threads_);
      throw;
    }
  } else {
    learn();
    counts_changed();
  }
  if (sample) sample->merge(std::move(taken));
}

void FlyNN::subtract(const ClassCounts& removed) {
  // Per-class row totals first, so that the usual mistake (rows of a class the model saw
  // fewer of) is reported by class name; ClassCounts checks every unit as well.
  for (std::size_t l = 0; l < labels_.size(); ++l) {
    const std::uint64_t have = counts_.rows_per_class()[l];
    const std::uint64_t take = removed.rows_per_class()[l];
    if (take > have)
      throw Error(fmt::format("cannot forget {} rows of class '{}': the model holds only {}",
                              take, labels_.name(l), have));
  }
  counts_ -= removed;
  counts_changed();
}

void FlyNN::forget(const Dataset& data, const ProgressFn& progress) {
  require_exact_counts(provenance_);
  subtract(count(data, progress));
}

void FlyNN::forget(const DataView& rows, std::span<const std::uint32_t> class_ids,
                   const ProgressFn& progress) {
  require_exact_counts(provenance_);
  subtract(count(rows, class_ids, progress));
}

void FlyNN::forget_counts(const ClassCounts& removed) {
  require_exact_counts(provenance_);
  check_counts_shape(removed, labels_.size(), config());
  subtract(removed);
}

void FlyNN::add_classes(const LabelSet& extended) {
  for (std::size_t l = 0; l < labels_.size(); ++l) {
    if (l >= extended.size() || extended.name(l) != labels_.name(l))
      throw Error(fmt::format(
          "the extended label list must start with the model's labels in order ({}), but "
          "position {} is {}",
          labels_.joined(), l + 1,
          l < extended.size() ? "'" + extended.name(l) + "'" : std::string("missing")));
  }
  if (extended.size() == labels_.size()) return;
  ClassCounts grown(extended.size(), config().cells());
  std::copy(counts_.values().begin(), counts_.values().end(), grown.values().begin());
  std::copy(counts_.rows_per_class().begin(), counts_.rows_per_class().end(),
            grown.rows_per_class().begin());
  counts_ = std::move(grown);
  counts_changed();
  labels_ = extended;
}

void FlyNN::set_table_schema(TableSchema schema) {
  const std::size_t d = config().input_dim;
  if (!schema.empty() && schema.n_features() != d)
    throw Error(fmt::format("the table schema describes {} features, the model has d = {}",
                            schema.n_features(), d));
  if (!schema.fill.empty() && schema.fill.size() != d)
    throw Error(fmt::format("the table schema has {} fill values, the model has d = {}",
                            schema.fill.size(), d));
  schema_ = std::move(schema);
}

void FlyNN::merge(const FlyNN& other) {
  // First: whatever the configurations, a release's counts are not row sums to add to.
  if (provenance_.differentially_private || other.provenance_.differentially_private)
    throw Error("cannot merge differentially private models: combine DP releases with "
                "federated aggregation, which accounts for the privacy budget");
  const std::string diff = config().first_difference(other.config());
  if (!diff.empty())
    throw Error(fmt::format("cannot merge models whose {} differ ({} vs {})", diff,
                            config().describe(), other.config().describe()));
  if (labels_ != other.labels_)
    throw Error(fmt::format("cannot merge models with different label lists ({} vs {})",
                            labels_.joined(), other.labels_.joined()));
  if (stats_ != other.stats_)
    throw Error(fmt::format("cannot merge models whose feature statistics differ (variant {} "
                            "standardises with training statistics: train the parts after "
                            "set_feature_stats with the statistics of all rows)",
                            variant_name(config().variant)));
  if (schema_.columns != other.schema_.columns || schema_.named != other.schema_.named)
    throw Error("cannot merge models trained on tables with different columns (names or "
                "categories)");
  counts_ += other.counts_;
  counts_changed();
}

std::vector<double> FlyNN::scores(const Dataset& data, const PredictOptions& options) const {
  check_features(data);
  return scores_checked(DataView(data), options);
}

std::vector<double> FlyNN::scores(const DataView& rows, const PredictOptions& options) const {
  check_view(rows);
  return scores_checked(rows, options);
}

std::vector<std::uint32_t> FlyNN::hash(const DataView& rows, const PredictOptions& options) const {
  check_view(rows);
  std::vector<std::uint32_t> out(rows.n_rows() * config().rho);
  hasher_->hash(rows, out.data(), options.threads ? options.threads : threads_, options.progress);
  return out;
}

std::vector<double> FlyNN::scores_checked(const DataView& rows,
                                          const PredictOptions& options) const {
  config().check_memory(labels_.size());
  const std::size_t L = labels_.size();
  const std::shared_ptr<const FilterScorer> cached = scorer();
  const FilterScorer& scorer = *cached;
  const PairCoder coder(config());
  const int workers = detail::resolve_threads(options.threads ? options.threads : threads_);
  std::vector<PairCoder::Scratch> scratch(coder.active() ? static_cast<std::size_t>(workers) : 0);
  const std::uint32_t per_row = coder.codes_per_row();
  std::vector<double> out(rows.n_rows() * L);
  hasher_->hash_stream(
      rows, workers,
      [&](int worker, std::size_t first, std::size_t n, const std::uint32_t* winners) {
        const std::uint32_t* codes =
            coder.active() ? coder.block_codes(winners, n, scratch[static_cast<std::size_t>(worker)]) : winners;
        for (std::size_t r = 0; r < n; ++r)
          scorer.score(codes + r * per_row, out.data() + (first + r) * L);
      },
      options.progress);
  return out;
}

std::vector<std::uint32_t> FlyNN::classes_of_probabilities(const std::vector<double>& p, std::size_t n,
                                                           const PredictOptions& options) const {
  const std::size_t L = labels_.size();
  check_scores_shape(p.size(), n);
  std::vector<std::uint32_t> out(n);
  std::vector<std::uint32_t> tied;
  for (std::size_t r = 0; r < n; ++r) {
    const double* row = p.data() + r * L;
    const double best = row[argmax_class(row, L)];
    tied.clear();
    for (std::size_t l = 0; l < L; ++l)
      if (row[l] == best) tied.push_back(static_cast<std::uint32_t>(l));
    if (tied.size() == 1 || options.tie_break == TieBreak::LowestClass) {
      out[r] = tied.front();
    } else {
      SeededRng rng = SeededRng::keyed(options.tie_seed, RngStream::PredictTieBreak,
                                        options.first_row + r);
      out[r] = tied[rng.uniform_below(tied.size())];
    }
  }
  return out;
}

void FlyNN::check_scores_shape(std::size_t size, std::size_t n) const {
  if (size != n * labels_.size())
    throw Error(fmt::format("{} scores for {} rows of {} classes", size, n, labels_.size()));
}

void FlyNN::to_probabilities(std::vector<double>& s, std::size_t n) const {
  const std::size_t L = labels_.size();
  check_scores_shape(s.size(), n);
  std::vector<double> p(L);
  const std::shared_ptr<const std::vector<double>> priors = class_priors_cached();
  const double t = temperature(), w = calibration_.prior_weight;
  for (std::size_t r = 0; r < n; ++r) {
    scores_to_probabilities(s.data() + r * L, L, config().rho, t, w, priors->data(), p.data());
    std::copy(p.begin(), p.end(), s.begin() + static_cast<std::ptrdiff_t>(r * L));
  }
}

std::vector<double> FlyNN::logits(const DataView& rows, const PredictOptions& options) const {
  std::vector<double> s = scores(rows, options);
  const std::size_t L = labels_.size();
  const std::shared_ptr<const std::vector<double>> priors = class_priors_cached();
  const double inv = 1.0 / (static_cast<double>(config().rho) * temperature());
  const double w = calibration_.prior_weight;
  for (std::size_t r = 0; r < rows.n_rows(); ++r) {
    double* z = s.data() + r * L;
    const double best = *std::min_element(z, z + L);
    // log q_l = −gap_l/(ρt) − log Σ_k exp(−gap_k/(ρt)), then log((1 − w)·q_l + w·π_l) as a
    // log-sum of its two terms.
    double total = 0.0;
    for (std::size_t l = 0; l < L; ++l) total += std::exp(-(z[l] - best) * inv);
    const double log_total = std::log(total);
    for (std::size_t l = 0; l < L; ++l) {
      const double a = std::log1p(-w) - (z[l] - best) * inv - log_total;
      if (w == 0.0) {
        z[l] = a;
        continue;
      }
      const double b = std::log(w * (*priors)[l]);
      z[l] = std::max(a, b) + std::log1p(std::exp(-std::abs(a - b)));
    }
  }
  return s;
}

std::vector<std::uint32_t> FlyNN::predict(const Dataset& data,
                                          const PredictOptions& options) const {
  return classes_of_probabilities(predict_proba(data, options), data.n_rows, options);
}

std::vector<std::uint32_t> FlyNN::predict(const DataView& rows,
                                          const PredictOptions& options) const {
  return classes_of_probabilities(predict_proba(rows, options), rows.n_rows(), options);
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
