#include "flynn/eval/tune.hpp"

#include "flynn/detail/cpu_time.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/eval/time_budget.hpp"

namespace flynn::eval {

namespace {

// Progress of the stages on one scale: each stage gets a share of kUnitsPerShare units per
// full-data pass it costs, and reports its own (done, total) as a fraction of that share.
constexpr std::size_t kUnitsPerShare = 1000;

class StagedProgress {
 public:
  StagedProgress(const ProgressFn& fn, std::size_t total_shares)
      : fn_(fn), total_(total_shares * kUnitsPerShare) {}
  // A callback for a stage worth `shares` full-data passes.
  ProgressFn stage(std::size_t shares) {
    if (!fn_) return {};
    const std::size_t base = offset_;
    const std::size_t width = shares * kUnitsPerShare;
    offset_ += width;
    return [this, base, width](std::size_t done, std::size_t total) {
      const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
      return fn_(base + static_cast<std::size_t>(frac * static_cast<double>(width)), total_);
    };
  }

 private:
  const ProgressFn& fn_;
  std::size_t total_;
  std::size_t offset_ = 0;
};

}  // namespace

std::vector<Variant> tune_variants() {
  std::vector<Variant> out;
  // The default variant (zsign-q+paper) is in the space, so tuning can keep what it does.
  for (const char* name : {"paper", "sign", "z", "zsign", "thermo", "thermo-sign", "zsign-q+paper"})
    out.push_back(parse_variant(name));
  return out;
}

FlyConfig default_rule_config(const SearchOptions& search, std::uint32_t d, std::size_t n_classes) {
  HyperParams h;
  h.seed = search.fly_seed;
  h.class_weight = search.class_weight;
  return h.resolve(d, n_classes);
}

namespace {

// One run of tune_flynn: its phases, sharing the folds' evaluator, the staged progress and
// the deadline's plan.
class Tuning {
 public:
  Tuning(const Dataset& data, const std::vector<std::uint32_t>& folds, std::uint32_t k, const TuneOptions& o,
         StagedProgress& staged)
      : data_(data), folds_(folds), k_(k), o_(o), staged_(staged), ev_(data, folds, k) {}

  void search(TuneResult& res) {
    SearchOptions search = o_.search;
    if (o_.deadline.set()) {
      // A limit that has passed still lets the search make its one full-data evaluation.
      search.time_limit_seconds = std::max(1e-6, o_.deadline.left());
      search.reserve_full_evaluations = o_.fits_after + (o_.calibrate || o_.keep_out_of_fold_scores ? 1.0 : 0.0);
      // The defaults' own configuration competes from the first rung rather than after the
      // search, when time may have run out.
      if (o_.keep_default_unless_beaten)
        search.first_candidates.push_back(default_rule_config(o_.search, data_.n_features, data_.classes.size()));
    }
    res.search = search_flynn(data_, folds_, k_, search, staged_.stage(o_.search.budget));
    res.config = res.search.best_config;
    res.cv = res.search.best_cv;
  }

  // The defaults' own configuration on the same folds, at the rule's own γ, judged by the
  // search's metric; a tie keeps the default (what `flynn train` would give anyway).
  void try_default(TuneResult& res) {
    ProgressFn stage = staged_.stage(1);
    if (o_.deadline.set()) return skip(stage);  // a candidate of the search already
    const FlyConfig rule = default_rule_config(o_.search, data_.n_features, data_.classes.size());
    if (!fits(res, evaluation_seconds(res, rule), "defaults")) return skip(stage);
    const CvResult cv = ev_.evaluate(rule, {rule.gamma}, o_.search.threads, stage, log_loss()).front();
    res.default_candidate = TuneResult::DefaultCandidate{rule, cv};
    if (cv.metric(o_.search.metric) >= res.cv.metric(o_.search.metric)) {
      res.config = rule;
      res.cv = cv;
      res.kept_default = true;
    }
  }

  // One extension of the chosen configuration, cross-validated on the same folds and taken
  // when it scores strictly higher (a tie keeps the simpler model). `applies` says whether
  // the chosen configuration can take it.
  void try_extension(TuneResult& res, bool applies, const FlyConfig& extended, TuneResult::ExtensionTrial& trial,
                     const char* name) {
    ProgressFn stage = staged_.stage(1);
    if (!applies || !valid(extended) ||
        fly_cv_memory_bytes(extended, data_.n_rows, data_.classes.size()) > o_.search.guard.max_memory)
      return skip(stage);
    if (!fits(res, evaluation_seconds(res, extended), name)) return skip(stage);
    const CvResult cv = ev_.evaluate(extended, {extended.gamma}, o_.search.threads, stage, log_loss()).front();
    trial.candidate = TuneResult::DefaultCandidate{extended, cv};
    trial.metric_before = res.cv.metric(o_.search.metric);
    if (cv.metric(o_.search.metric) > trial.metric_before) {
      res.config = extended;
      res.cv = cv;
      trial.taken = true;
    }
  }

  void calibrate(TuneResult& res) {
    ProgressFn stage = staged_.stage(1);
    if (!o_.keep_out_of_fold_scores && !fits(res, evaluation_seconds(res, res.config), "calibration"))
      return skip(stage);
    std::vector<double> scores = ev_.out_of_fold_scores(res.config, o_.search.threads, stage);
    if (o_.calibrate)
      res.calibration = calibrate_out_of_fold(scores, data_.classes.size(), res.config.rho, data_.labels, folds_, k_,
                                              class_weights_of_rows(res.config, data_.classes, data_.labels));
    if (o_.keep_out_of_fold_scores) res.out_of_fold_scores = std::move(scores);
  }

  void compare(TuneResult& res) {
    ProgressFn stage = staged_.stage(2);
    // Exact kNN's cost, roughly: n² · d multiply-adds at 1e9 a second.
    const double n = static_cast<double>(data_.n_rows);
    if (!fits(res, n * n * static_cast<double>(data_.n_features) * 1e-9, "comparison")) return skip(stage);
    o_.comparison(data_, folds_, k_, o_.search.threads);
    if (stage && !stage(1, 1)) throw Cancelled();
  }

 private:
  bool log_loss() const { return o_.search.metric == CvMetric::LogLoss; }
  bool valid(const FlyConfig& c) const {
    try {
      c.validate(data_.classes.size());
    } catch (const Error&) {
      return false;
    }
    return true;
  }
  double evaluation_seconds(const TuneResult& res, const FlyConfig& c) const {
    return res.search.rate.seconds_for(cv_evaluation_work(c, data_.n_rows, data_.classes.size(), k_, 1));
  }
  // Whether a phase of `seconds` fits before the deadline with what must follow it (the
  // trainings after tune_flynn, and kept out-of-fold scores not yet computed); records it
  // as skipped otherwise.
  bool fits(TuneResult& res, double seconds, const char* name) const {
    const double after = res.search.rate.seconds_for(fit_work(res.config, data_.n_rows)) * o_.fits_after +
                         (o_.keep_out_of_fold_scores ? evaluation_seconds(res, res.config) : 0.0);
    if (o_.deadline.fits(kPlanMargin * seconds + after)) return true;
    res.skipped.emplace_back(name);
    return false;
  }
  static void skip(const ProgressFn& stage) {
    if (stage && !stage(1, 1)) throw Cancelled();
  }

  const Dataset& data_;
  const std::vector<std::uint32_t>& folds_;
  std::uint32_t k_;
  const TuneOptions& o_;
  StagedProgress& staged_;
  const FlyCvEvaluator ev_;
};

}  // namespace

TuneResult tune_flynn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                      std::uint32_t k_folds, const TuneOptions& o, const ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (!data.has_labels) throw Error(fmt::format("{}: tuning needs labels", data.source));
  data.require_trainable();
  if (data.n_rows < k_folds)
    throw Error(fmt::format("{}: {} rows, fewer than the {} folds", data.source, data.n_rows, k_folds));

  // Shares: the search costs about `budget` full-data passes; calibration one more; each
  // comparison two (tuned kNN: FAISS over all rows, once per scaling).
  const bool scores = o.calibrate || o.keep_out_of_fold_scores;
  StagedProgress staged(progress, o.search.budget + (o.keep_default_unless_beaten ? 1 : 0) + (o.try_pairs ? 1 : 0) +
                                      (o.try_value_transform ? 1 : 0) + (scores ? 1 : 0) + (o.comparison ? 2 : 0));
  TuneResult res;
  Tuning tuning(data, fold_of_row, k_folds, o, staged);
  tuning.search(res);
  if (o.keep_default_unless_beaten) tuning.try_default(res);
  if (o.try_value_transform) {
    FlyConfig transformed = res.config;
    transformed.value_transform = Defaults::tune_value_transform;
    tuning.try_extension(res, res.config.variant.standardize && res.config.value_transform == ValueTransform::None,
                         transformed, res.transform, "value_transform");
  }
  if (o.try_pairs) {
    FlyConfig with_pairs = res.config;
    with_pairs.pairs = Defaults::tune_pairs;
    tuning.try_extension(res, res.config.pairs == 0, with_pairs, res.pairs, "pairs");
  }
  if (scores) tuning.calibrate(res);
  if (o.comparison) tuning.compare(res);
  res.seconds = detail::seconds_since(start);
  return res;
}

FlyNN train_tuned_model(const Dataset& data, const LabelSet& labels, const TuneResult& result, int threads,
                        const ProgressFn& progress) {
  FlyNN model(result.config, labels, threads);
  model.fit(data, progress);
  return model;
}

}  // namespace flynn::eval
