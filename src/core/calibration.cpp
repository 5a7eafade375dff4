#include "flynn/calibration.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/random.hpp"
#include "flynn/scoring.hpp"
#include "flynn/detail/parallel.hpp"

namespace flynn {

const char* calibration_source_name(CalibrationSource s) {
  switch (s) {
    case CalibrationSource::Default: return "default";
    case CalibrationSource::LeaveOneOut: return "leave-one-out";
    case CalibrationSource::Given: return "given";
    case CalibrationSource::Public: return "public";
  }
  return "default";
}

void Calibration::validate() const {
  if (!(temperature > 0.0) || !std::isfinite(temperature))
    throw Error(fmt::format("temperature = {}: must be a finite positive number", temperature));
  if (!(prior_weight >= 0.0 && prior_weight < 1.0))
    throw Error(fmt::format("prior weight = {}: must be a number in [0, 1)", prior_weight));
}

namespace {

constexpr double kPriorWeights[] = {0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5};
constexpr std::size_t kPriorWeightCount = sizeof kPriorWeights / sizeof kPriorWeights[0];
// 1 − w for each prior weight (the same doubles as computing 1.0 − w where it is used).
constexpr auto kKeptShares = [] {
  std::array<double, kPriorWeightCount> kept{};
  for (std::size_t j = 0; j < kPriorWeightCount; ++j) kept[j] = 1.0 - kPriorWeights[j];
  return kept;
}();
constexpr int kTemperatureSteps = 64;  // 10^-3 … 10 in steps of 10^(1/16)
// 10^(1/16) to the last bit of a double; the grid is t_k = 10^-3 · r^k by repeated
// multiplication (IEEE-754 exact rounding: the same bits on every machine).
constexpr double kTemperatureRatio = 1.1547819846894581;

std::vector<double> grid_temperatures() {
  std::vector<double> t(kTemperatureSteps + 1);
  t[0] = 1e-3;
  for (int k = 1; k <= kTemperatureSteps; ++k) t[k] = t[k - 1] * kTemperatureRatio;
  return t;
}

}  // namespace

const std::vector<Calibration>& calibration_grid() {
  static const std::vector<Calibration> grid = [] {
    std::vector<Calibration> g;
    for (double t : grid_temperatures())
      for (double a : kPriorWeights) g.push_back(Calibration{t, a, CalibrationSource::LeaveOneOut, 0});
    return g;
  }();
  return grid;
}

// ---- the sample -----------------------------------------------------------------------------

CalibrationSample::CalibrationSample(const FlyConfig& config, std::uint64_t total_rows)
    : key_(SeededRng::keyed(config.seed, RngStream::CalibrationSample, 0).next_u64()),
      key_codes_(config.rho),
      codes_per_row_(config.codes_per_row()) {
  const std::uint64_t by_memory = kCalibrationSampleBytes / (std::uint64_t{4} * codes_per_row_);
  const std::uint64_t target = std::max<std::uint64_t>(1, std::min(kCalibrationRows, by_memory));
  all_ = total_rows <= target;
  expected_rows_ = all_ ? total_rows : target;
  // Keys are uniform in [0, 2^64): the share target/total of them lies at or below this.
  if (!all_) threshold_ = static_cast<std::uint64_t>((static_cast<unsigned __int128>(target) << 64) / total_rows);
}

namespace {
// The row's key: its ρ winners (its pair codes are a function of them) and its class,
// under the model's seed.
std::uint64_t row_key(std::uint64_t key, std::uint32_t cls, const std::uint32_t* codes, std::uint32_t n) {
  std::uint64_t h = key;
  for (std::uint32_t k = 0; k < n; ++k) h = mix64(h + codes[k]);
  return mix64(h ^ (std::uint64_t{cls} << 32));
}
}  // namespace

bool CalibrationSample::wants(std::uint32_t cls, const std::uint32_t* codes) const {
  if (codes_per_row_ == 0) return false;
  if (all_) return true;
  return row_key(key_, cls, codes, key_codes_) <= threshold_;
}

CalibrationSample CalibrationSample::emptied() const {
  CalibrationSample s;
  s.key_ = key_;
  s.threshold_ = threshold_;
  s.all_ = all_;
  s.key_codes_ = key_codes_;
  s.codes_per_row_ = codes_per_row_;
  s.expected_rows_ = expected_rows_;
  return s;
}

void CalibrationSample::add(std::uint32_t cls, const std::uint32_t* codes, std::uint64_t times) {
  const std::uint64_t key = row_key(key_, cls, codes, key_codes_);
  const auto it = index_.find(key);
  if (it != index_.end() && classes_[it->second] == cls &&
      std::equal(codes, codes + codes_per_row_, this->codes(it->second))) {
    times_[it->second] += times;
  } else {
    // A new row (or, with odds of 2^-64, another row of the same key, kept apart).
    if (it == index_.end()) index_.emplace(key, classes_.size());
    classes_.push_back(cls);
    times_.push_back(times);
    codes_.insert(codes_.end(), codes, codes + codes_per_row_);
  }
  rows_ += times;
}

void CalibrationSample::merge(const CalibrationSample& other) {
  if (other.size() == 0) return;
  if (other.codes_per_row_ != codes_per_row_)
    throw Error(fmt::format("calibration samples of {} and {} codes per row cannot be merged", codes_per_row_,
                            other.codes_per_row_));
  for (std::size_t r = 0; r < other.size(); ++r) add(other.cls(r), other.codes(r), other.times(r));
}

void CalibrationSample::merge(CalibrationSample&& other) {
  if (size() != 0 || other.codes_per_row_ != codes_per_row_ || other.key_ != key_) {
    merge(static_cast<const CalibrationSample&>(other));
    return;
  }
  rows_ = other.rows_;
  classes_ = std::move(other.classes_);
  times_ = std::move(other.times_);
  codes_ = std::move(other.codes_);
  index_ = std::move(other.index_);
  other = other.emptied();
}

void CalibrationSample::reserve(std::size_t rows) {
  // Capacity only: the pages of the codes are touched as rows arrive.
  classes_.reserve(rows);
  times_.reserve(rows);
  codes_.reserve(rows * codes_per_row_);
  index_.reserve(rows);
}

// ---- leave-one-out scores -------------------------------------------------------------------

namespace {

// filter_value(c, γ, w) for the counts up to a bound, tabulated (pow above it).
class PowerTable {
 public:
  PowerTable(double gamma, double weight, std::uint32_t top) : gamma_(gamma), weight_(weight) {
    values_.resize(std::size_t(top) + 1);
    for (std::uint32_t c = 0; c <= top; ++c) values_[c] = filter_value(c, gamma, weight);
  }
  double at(std::uint32_t c) const { return c < values_.size() ? values_[c] : filter_value(c, gamma_, weight_); }

 private:
  double gamma_, weight_;
  std::vector<double> values_;
};

}  // namespace

struct LeaveOneOutScorer::Impl {
  struct Block {
    std::uint32_t first, last;
    double factor;
    std::vector<PowerTable> powers;  // one per class, or one shared without weights
    std::vector<double> sums;        // each class's raw filter values over the block, in cell order
    const PowerTable& power(std::size_t l) const { return powers.size() == 1 ? powers[0] : powers[l]; }
  };
  Impl(const ClassCounts& c, const FlyConfig& config, const std::vector<double>& w)
      : counts(c), scorer(c, config, config.gamma, w), relative(config.filter_scoring == FilterScoring::Relative) {}
  const ClassCounts& counts;
  FilterScorer scorer;
  bool relative;
  std::vector<Block> blocks;
  double own_score(const std::uint32_t* codes, std::uint32_t n_codes, std::uint32_t cls) const;
};

double LeaveOneOutScorer::Impl::own_score(const std::uint32_t* codes, std::uint32_t n_codes,
                                          std::uint32_t cls) const {
  const std::uint32_t* c = counts.of_class(cls);
  double score = 0.0;
  for (const Block& b : blocks) {
    const PowerTable& p = b.power(cls);
    double kept = 0.0, change = 0.0;
    for (std::uint32_t k = 0; k < n_codes; ++k) {
      const std::uint32_t code = codes[k];
      if (code < b.first || code >= b.last) continue;
      const std::uint32_t was = c[code];
      const double without = p.at(was > 0 ? was - 1 : 0);
      kept += without;
      change += without - p.at(was);
    }
    const double scale = relative ? relative_scale(b.sums[cls] + change, b.last - b.first) : 1.0;
    score += b.factor * scale * kept;
  }
  return score;
}

LeaveOneOutScorer::LeaveOneOutScorer(const ClassCounts& counts, const FlyConfig& config,
                                     const std::vector<double>& weights)
    : impl_(new Impl(counts, config, weights)) {
  const std::size_t L = counts.n_classes();
  // Tables of powers up to a bound that keeps all of them within a few MiB.
  const std::uint32_t top = std::min<std::uint32_t>(
      counts.max_count(), static_cast<std::uint32_t>(std::max<std::size_t>(64, (std::size_t{1} << 19) / std::max<std::size_t>(1, weights.empty() ? 1 : L))));
  const std::vector<double> factors = block_factors(config);
  const std::vector<FlyConfig::CellBlock> cells = config.cell_blocks(config.gamma);
  for (std::size_t b = 0; b < cells.size(); ++b) {
    Impl::Block block{cells[b].first, cells[b].last, factors[b], {}, std::vector<double>(L, 0.0)};
    for (std::size_t l = 0; l < (weights.empty() ? 1 : L); ++l)
      block.powers.emplace_back(cells[b].gamma, weights.empty() ? 1.0 : weights[l], top);
    if (impl_->relative)
      for (std::size_t l = 0; l < L; ++l) {
        const std::uint32_t* c = counts.of_class(l);
        const PowerTable& p = block.power(l);
        double sum = 0.0;
        for (std::uint32_t i = block.first; i < block.last; ++i) sum += p.at(c[i]);
        block.sums[l] = sum;
      }
    impl_->blocks.push_back(std::move(block));
  }
}

LeaveOneOutScorer::~LeaveOneOutScorer() { delete impl_; }

void LeaveOneOutScorer::score(const std::uint32_t* codes, std::uint32_t cls, double* out) const {
  impl_->scorer.score(codes, out);
  out[cls] = impl_->own_score(codes, impl_->scorer.codes_per_row(), cls);
}

// ---- the loss of every candidate ------------------------------------------------------------

namespace {
// round(ℓ · kCalibrationLossScale) for 0 ≤ ℓ ≤ −log(kCalibrationLogLossFloor), halves away
// from zero as llround: the scaled loss is below 2^26, so its fraction is exact.
std::uint64_t fixed_point_loss(double loss) {
  const double scaled = loss * kCalibrationLossScale;
  const auto whole = static_cast<std::uint64_t>(scaled);
  return whole + (scaled - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}
}  // namespace

std::size_t calibration_totals_size() { return 2 * calibration_grid().size() + 1; }

CalibrationLoss::CalibrationLoss(const ClassCounts& counts, const std::vector<double>& weights, std::uint32_t rho)
    : CalibrationLoss(counts.rows_per_class(), weights, rho, true) {}

CalibrationLoss CalibrationLoss::of_held_out_rows(const std::vector<std::uint64_t>& rows_per_class,
                                                  const std::vector<double>& weights, std::uint32_t rho) {
  return CalibrationLoss(rows_per_class, weights, rho, false);
}

CalibrationLoss::CalibrationLoss(const std::vector<std::uint64_t>& rows_per_class, const std::vector<double>& weights,
                                 std::uint32_t rho, bool leave_one_out)
    : n_classes_(rows_per_class.size()), rho_(rho), leave_one_out_(leave_one_out), totals_(calibration_totals_size(), 0) {
  if (rho == 0) throw Error("calibration: rho must be at least 1");
  if (n_classes_ == 0) throw Error("calibration: no classes");
  if (!weights.empty() && weights.size() != n_classes_)
    throw Error(fmt::format("calibration: {} class weights for {} classes", weights.size(), n_classes_));
  // class_priors' (n_l + 1)·w_l before normalising; a leave-one-out row takes its own
  // w_l out of its class's.
  for (std::size_t l = 0; l < n_classes_; ++l) {
    w_.push_back(weights.empty() ? 1.0 : weights[l]);
    u_.push_back(w_.back() * (static_cast<double>(rows_per_class[l]) + 1.0));
    total_ += u_.back();
  }
  scratch_.resize(3 * n_classes_);
}

void CalibrationLoss::add(const double* scores, std::uint32_t cls, std::uint64_t times) {
  const std::size_t L = n_classes_;
  if (cls >= L) throw Error(fmt::format("calibration: class id {} is not below {}", cls, L));
  double* gap = scratch_.data();
  double* e = gap + L;
  double* prior = e + L;  // the row's priors: without the row for leave-one-out scores
  const double best = *std::min_element(scores, scores + L);
  for (std::size_t l = 0; l < L; ++l) gap[l] = scores[l] - best;
  const double own = leave_one_out_ ? w_[cls] : 0.0;
  for (std::size_t l = 0; l < L; ++l) prior[l] = (u_[l] - (l == cls ? own : 0.0)) / (total_ - own);
  const std::vector<Calibration>& grid = calibration_grid();
  const std::size_t G = grid.size();
  const double cap = -std::log(kCalibrationLogLossFloor);
  for (std::size_t i = 0, k = 0; i < G; i += kPriorWeightCount) {
    const double inv = 1.0 / (static_cast<double>(rho_) * grid[i].temperature);
    double z = 0.0;
    // exp(−0) is 1 exactly: the best classes need no exp.
    for (std::size_t l = 0; l < L; ++l) z += e[l] = gap[l] == 0.0 ? 1.0 : std::exp(-gap[l] * inv);
    for (std::size_t l = 0; l < L; ++l) e[l] /= z;  // q, the softmax
    // Every prior weight w at once (the compiler keeps the nine in vector registers): the
    // candidate's probabilities are (1 − w)·q_l + w·π_l, and its decision, the first largest,
    // is the true class when every class before it is below it and none after it above (the
    // comparisons of a first-largest search, without its branches).
    double p_true[kPriorWeightCount];
    std::uint64_t right[kPriorWeightCount];
    for (std::size_t j = 0; j < kPriorWeightCount; ++j) {
      p_true[j] = kKeptShares[j] * e[cls] + kPriorWeights[j] * prior[cls];
      right[j] = 1;
    }
    for (std::size_t l = 0; l < L; ++l) {
      if (l == cls) continue;
      const double el = e[l], pl = prior[l];
      if (l < cls) {
        for (std::size_t j = 0; j < kPriorWeightCount; ++j)
          right[j] &= kKeptShares[j] * el + kPriorWeights[j] * pl < p_true[j] ? 1 : 0;
      } else {
        for (std::size_t j = 0; j < kPriorWeightCount; ++j)
          right[j] &= kKeptShares[j] * el + kPriorWeights[j] * pl <= p_true[j] ? 1 : 0;
      }
    }
    for (std::size_t j = 0; j < kPriorWeightCount; ++j, ++k) {
      const double loss = -std::log(std::max(p_true[j], kCalibrationLogLossFloor));
      totals_[k] += times * fixed_point_loss(std::clamp(loss, 0.0, cap));
      totals_[G + k] += right[j] * times;
    }
  }
  totals_[2 * G] += argmin_class(scores, L) == cls ? times : 0;
  rows_ += times;
}

void CalibrationLoss::merge(const CalibrationLoss& other) {
  if (other.n_classes_ != n_classes_) throw Error("calibration: losses of different models cannot be merged");
  for (std::size_t k = 0; k < totals_.size(); ++k) totals_[k] += other.totals_[k];
  rows_ += other.rows_;
}

Calibration choose_calibration(std::span<const std::uint64_t> totals, std::uint64_t rows) {
  const std::vector<Calibration>& grid = calibration_grid();
  const std::size_t G = grid.size();
  if (totals.size() != calibration_totals_size())
    throw Error(fmt::format("calibration: {} sums, expected {} (losses and right decisions of {} candidates, and the "
                            "score order's right decisions)",
                            totals.size(), calibration_totals_size(), G));
  if (rows == 0) return Calibration{};
  // Candidates of prior weight 0 decide as the score order does, so one always qualifies.
  std::size_t best = G;
  for (std::size_t k = 0; k < G; ++k) {
    const bool keeps_accuracy = totals[G + k] >= totals[2 * G] || grid[k].prior_weight == 0.0;
    if (keeps_accuracy && (best == G || totals[k] < totals[best])) best = k;
  }
  Calibration c = grid[best];
  c.source = CalibrationSource::LeaveOneOut;
  c.rows = rows;
  return c;
}

CalibrationLoss calibration_loss(const ClassCounts& counts, const FlyConfig& config,
                                 const std::vector<double>& weights, const CalibrationSample& sample,
                                 int threads) {
  CalibrationLoss total(counts, weights, config.rho);
  if (sample.size() == 0) return total;
  const LeaveOneOutScorer scorer(counts, config, weights);
  constexpr std::size_t kRowsPerTask = 256;
  const std::size_t tasks = (sample.size() + kRowsPerTask - 1) / kRowsPerTask;
  const int workers = std::max(1, std::min<int>(detail::resolve_threads(threads), static_cast<int>(tasks)));
  std::vector<CalibrationLoss> partial(static_cast<std::size_t>(workers), total);
  std::vector<std::vector<double>> scores(static_cast<std::size_t>(workers),
                                          std::vector<double>(counts.n_classes()));
  detail::parallel_for(tasks, workers, [&](std::size_t task, int worker) {
    CalibrationLoss& loss = partial[static_cast<std::size_t>(worker)];
    double* s = scores[static_cast<std::size_t>(worker)].data();
    const std::size_t end = std::min(sample.size(), (task + 1) * kRowsPerTask);
    for (std::size_t r = task * kRowsPerTask; r < end; ++r) {
      scorer.score(sample.codes(r), sample.cls(r), s);
      loss.add(s, sample.cls(r), sample.times(r));
    }
  });
  for (const CalibrationLoss& p : partial) total.merge(p);
  return total;
}

}  // namespace flynn
