#include "flynn/eval/tune.hpp"

#include "flynn/detail/cpu_time.hpp"

#include <chrono>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/eval/fly_cv.hpp"

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

// The defaults' own configuration as a candidate: one more evaluation, at the rule's own
// γ, judged by the search's metric; a tie keeps the default (what `flynn train` would give
// anyway).
void weigh_default(TuneResult& res, const FlyCvEvaluator& ev, const Dataset& data, const TuneOptions& o,
                   const ProgressFn& stage) {
  const FlyConfig rule = default_rule_config(o.search, data.n_features, data.classes.size());
  const CvResult cv =
      ev.evaluate(rule, {rule.gamma}, o.search.threads, stage, o.search.metric == CvMetric::LogLoss).front();
  res.default_candidate = TuneResult::DefaultCandidate{rule, cv};
  if (cv.metric(o.search.metric) >= res.cv.metric(o.search.metric)) {
    res.config = rule;
    res.cv = cv;
    res.kept_default = true;
  }
}

// One extension of the chosen configuration, cross-validated on the same folds and taken
// when it scores strictly higher (a tie keeps the simpler model). `applies` says whether
// the chosen configuration can take it.
void try_extension(TuneResult& res, const FlyCvEvaluator& ev, const Dataset& data, const TuneOptions& o,
                   const ProgressFn& stage, bool applies, const FlyConfig& extended,
                   TuneResult::ExtensionTrial& trial) {
  const auto fits = [&] {
    try {
      extended.validate(data.classes.size());
    } catch (const Error&) {
      return false;
    }
    return fly_cv_memory_bytes(extended, data.n_rows, data.classes.size()) <= o.search.guard.max_memory;
  };
  if (!applies || !fits()) {
    if (stage && !stage(1, 1)) throw Cancelled();
    return;
  }
  const CvResult cv =
      ev.evaluate(extended, {extended.gamma}, o.search.threads, stage, o.search.metric == CvMetric::LogLoss).front();
  trial.candidate = TuneResult::DefaultCandidate{extended, cv};
  trial.metric_before = res.cv.metric(o.search.metric);
  if (cv.metric(o.search.metric) > trial.metric_before) {
    res.config = extended;
    res.cv = cv;
    trial.taken = true;
  }
}

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
  StagedProgress staged(progress, o.search.budget + (o.keep_default_unless_beaten ? 1 : 0) + (o.try_pairs ? 1 : 0) +
                                      (o.try_value_transform ? 1 : 0) + (o.calibrate ? 1 : 0) +
                                      (o.comparison ? 2 : 0));
  TuneResult res;
  res.search = search_flynn(data, fold_of_row, k_folds, o.search, staged.stage(o.search.budget));
  res.config = res.search.best_config;
  res.cv = res.search.best_cv;
  const FlyCvEvaluator ev(data, fold_of_row, k_folds);  // the default candidate's and calibration's
  if (o.keep_default_unless_beaten) weigh_default(res, ev, data, o, staged.stage(1));
  if (o.try_value_transform) {
    FlyConfig transformed = res.config;
    transformed.value_transform = Defaults::tune_value_transform;
    try_extension(res, ev, data, o, staged.stage(1),
                  res.config.variant.standardize && res.config.value_transform == ValueTransform::None, transformed,
                  res.transform);
  }
  if (o.try_pairs) {
    FlyConfig with_pairs = res.config;
    with_pairs.pairs = Defaults::tune_pairs;
    try_extension(res, ev, data, o, staged.stage(1), res.config.pairs == 0, with_pairs, res.pairs);
  }
  if (o.calibrate) {
    const std::vector<double> scores = ev.out_of_fold_scores(res.config, o.search.threads, staged.stage(1));
    res.calibration =
        calibrate_out_of_fold(scores, data.classes.size(), res.config.rho, data.labels, fold_of_row, k_folds,
                              class_weights_of_rows(res.config, data.classes, data.labels));
  }
  if (o.comparison) {
    ProgressFn comparison_progress = staged.stage(2);
    o.comparison(data, fold_of_row, k_folds, o.search.threads);
    if (comparison_progress && !comparison_progress(1, 1)) throw Cancelled();
  }
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
