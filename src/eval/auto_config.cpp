#include "flynn/eval/auto_config.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/progress_tracker.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/settings_table.hpp"

namespace flynn::eval {

namespace {

// The default's γ grid: γ only changes filter values, so every γ is scored from one hashing.
const std::vector<double> kGammas = {0.0, 0.5, 0.8, 0.9};

// Variants tried besides the rule's, in order (ties go to the earlier one). `max_d` limits
// encodings whose width grows with d (8 units per feature) to the data they were made for.
struct VariantCandidate {
  const char* name;
  std::uint32_t max_d;
};
constexpr std::uint32_t kAnyD = 0xFFFFFFFFu;
const VariantCandidate kVariants[] = {
    {"zsign-q+paper", kAnyD}, {"zsign-q", kAnyD}, {"z", kAnyD},          {"paper", kAnyD},
    {"thermo-sign", 64},      {"anchor", 32},     {"anchor+paper", 32},
};

// The larger hash: 4× the rule's units where that stays within the default's cap (so only
// where hashing is cheap: d ≤ max_m / 1024), at the rule's ρ/m.
constexpr std::uint32_t kLargerM = 4;

}  // namespace

std::vector<double> auto_gammas(const HyperParams& given) {
  if (given.gamma) return {*given.gamma};
  return kGammas;
}

std::vector<AutoCandidate> auto_candidates(const HyperParams& given, std::uint32_t d, std::size_t n_classes) {
  std::vector<AutoCandidate> out;
  auto add = [&](std::string name, const HyperParams& h) {
    FlyConfig c = h.resolve(d, n_classes);
    for (const auto& have : out)
      if (have.config == c) return;  // e.g. the rule's own variant
    out.push_back({std::move(name), c});
  };
  add("default", given);
  const bool m_free = !given.m && !given.expansion_factor;
  const FlyConfig rule = out.front().config;
  const bool larger_m = m_free && std::uint64_t{rule.m} * kLargerM <= Defaults::max_m;
  auto with_larger_m = [&](HyperParams h, const std::string& name) {
    if (!larger_m) return;
    h.m = std::uint64_t{rule.m} * kLargerM;
    add(name + " m×4", h);
  };
  with_larger_m(given, "default");
  // The rule's configuration with second-order filters (docs/design/defaults.md, "Options that are not defaults").
  if (!given.pairs) {
    HyperParams h = given;
    h.pairs = Defaults::tune_pairs;
    try {
      add("default pairs", h);
    } catch (const Error&) {  // too few units or winners for pairs: not a candidate
    }
  }
  // … and with its values transformed where it standardises (docs/design/defaults.md, "Options that are not defaults").
  if (!given.value_transform && rule.variant.standardize) {
    HyperParams h = given;
    h.value_transform = Defaults::tune_value_transform;
    add("default log1p", h);
  }
  if (given.variant || (given.preprocess && *given.preprocess == Preprocess::Densify)) return out;
  for (const VariantCandidate& v : kVariants) {
    if (d > v.max_d) continue;
    HyperParams h = given;
    h.variant = parse_variant(v.name);
    add(v.name, h);
    with_larger_m(h, v.name);
  }
  return out;
}

double auto_margin(const AutoOptions& o, std::size_t n_rows) {
  const double se = std::sqrt(0.25 / static_cast<double>(std::max<std::size_t>(1, n_rows)));
  return std::max(o.min_margin, o.margin_standard_errors * se);
}

CvMetric auto_metric(const HyperParams& given) {
  return given.class_weight && !given.class_weight->is_none() ? CvMetric::BalancedAccuracy : CvMetric::Accuracy;
}

std::pair<std::size_t, std::size_t> auto_rule(const std::vector<std::vector<double>>& metric,
                                              std::size_t default_gamma, double margin) {
  if (metric.empty() || default_gamma >= metric.front().size()) throw Error("auto: no default score");
  std::pair<std::size_t, std::size_t> best{0, default_gamma};
  double best_value = metric[0][default_gamma];
  for (std::size_t c = 0; c < metric.size(); ++c)
    for (std::size_t g = 0; g < metric[c].size(); ++g)
      if (metric[c][g] > best_value) {
        best_value = metric[c][g];
        best = {c, g};
      }
  if (!(best_value - metric[0][default_gamma] > margin)) return {0, default_gamma};
  return best;
}

AutoChoice choose_auto_config(const Dataset& data, const HyperParams& given, const AutoOptions& o,
                              const ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (!data.has_labels) throw Error(fmt::format("{}: --auto needs labels", data.source));
  data.require_trainable();
  if (o.folds < 2) throw Error("auto: at least 2 folds");
  if (!(o.min_margin >= 0.0) || !std::isfinite(o.min_margin) || !(o.margin_standard_errors >= 0.0) ||
      !std::isfinite(o.margin_standard_errors))
    throw Error("auto: the margin must be ≥ 0");
  if (o.max_rows < 2 * o.folds) throw Error(fmt::format("auto: max_rows must be at least {}", 2 * o.folds));
  AutoChoice res;
  const auto d = static_cast<std::uint32_t>(data.n_features);
  res.candidates = auto_candidates(given, d, data.classes.size());
  res.gammas = auto_gammas(given);
  res.metric = o.metric;
  const double rule_gamma = res.candidates.front().config.gamma;
  const auto it = std::find(res.gammas.begin(), res.gammas.end(), rule_gamma);
  if (it == res.gammas.end()) throw Error("auto: the default's γ is not in the grid");
  const auto default_gamma = static_cast<std::size_t>(it - res.gammas.begin());
  res.chosen_gamma = default_gamma;
  res.config = res.candidates.front().config;

  // The rows the choice reads: all, or a stratified subsample for large data.
  const Dataset* rows = &data;
  Dataset subsample;
  if (data.n_rows > o.max_rows) {
    subsample = data.subset(
        stratified_subsample(data, static_cast<double>(o.max_rows) / static_cast<double>(data.n_rows), o.fold_seed));
    rows = &subsample;
  }
  res.rows = rows->n_rows;
  res.margin = auto_margin(o, res.rows);
  // CV needs every fold to hold rows of at least two classes' training data; with too few
  // rows the scores would be noise, so the rule's configuration stands.
  const auto sizes = rows->class_sizes();
  const auto enough = std::count_if(sizes.begin(), sizes.end(), [&](std::size_t n) { return n >= o.folds; });
  if (rows->n_rows < 2 * o.folds || enough < 2) {
    res.seconds = detail::seconds_since(start);
    return res;
  }
  const FlyCvEvaluator ev(*rows, stratified_folds(rows->labels, rows->classes.size(), o.folds, o.fold_seed), o.folds);
  detail::ProgressTracker tracker(progress, res.candidates.size());
  std::vector<std::vector<double>> metric;
  for (const AutoCandidate& c : res.candidates) {
    res.cv.push_back(ev.evaluate(c.config, res.gammas, o.threads, {}, o.metric == CvMetric::LogLoss));
    metric.emplace_back();
    for (const CvResult& r : res.cv.back()) metric.back().push_back(r.metric(o.metric));
    tracker.advance(1);
  }
  const auto [c, g] = auto_rule(metric, default_gamma, res.margin);
  res.chosen = c;
  res.chosen_gamma = g;
  res.config = res.candidates[c].config;
  res.config.gamma = res.gammas[g];
  res.default_metric = metric[0][default_gamma];
  res.chosen_metric = metric[c][g];
  res.seconds = detail::seconds_since(start);
  return res;
}

HyperParams hyper_params_of(const FlyConfig& c) {
  // Every field of the configuration that is a hyper-parameter, through the table of
  // settings, so a field added to both (pairs, paper_half_min_columns) cannot be left out.
  HyperParams h;
  for (const ConfigField& field : config_fields())
    if (const HyperParamField* row = find_hyper_param(field.key)) row->set(h, field.get(c));
  return h;
}

}  // namespace flynn::eval
