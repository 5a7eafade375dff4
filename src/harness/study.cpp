#include "flynn/harness/study.hpp"

#include "flynn/eval/study_io.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <functional>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/progress_tracker.hpp"
#include "flynn/eval/cross_validation.hpp"
#include "flynn/baselines/knn_cv.hpp"
#include "flynn/eval/tune.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

using nlohmann::json;

namespace {

using detail::seconds_since;

void fill_cv(MethodOutcome& m, const CvResult& cv) {
  m.ok = true;
  m.accuracy = cv.mean;
  m.sd = cv.sd;
  m.fold_accuracy = cv.fold_accuracy;
  if (!cv.fold_balanced_accuracy.empty()) {
    m.balanced_accuracy = cv.balanced_accuracy;
    m.macro_f1 = cv.macro_f1;
  }
}

std::string fly_params(const FlyConfig& c) {
  return fmt::format("m={} (m/d={:.4g}) s={} rho={} gamma={:g} preprocess={}{}", c.m,
                     static_cast<double>(c.m) / c.input_dim, c.s, c.rho, c.gamma,
                     preprocess_name(c.preprocess),
                     c.variant.is_paper() ? "" : " variant=" + variant_name(c.variant));
}

json config_to_json(const FlyConfig& c) {
  json j = {{"m", c.m}, {"s", c.s}, {"rho", c.rho}, {"gamma", c.gamma},
            {"preprocess", preprocess_name(c.preprocess)}, {"seed", c.seed}};
  if (!c.variant.is_paper()) j["variant"] = variant_name(c.variant);
  return j;
}

// Runs `body`, recording an exception as the method's failure.
MethodOutcome guarded(const std::string& method, const std::function<void(MethodOutcome&)>& body) {
  MethodOutcome m;
  m.method = method;
  const auto t = std::chrono::steady_clock::now();
  try {
    body(m);
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    m.ok = false;
    m.error = e.what();
  }
  m.seconds = seconds_since(t);
  return m;
}

}  // namespace

const std::vector<std::string>& study_methods() {
  static const std::vector<std::string> m = {"FlyNN", "kNNC", "1NNC", "SBFC", "LR", "MLP"};
  return m;
}

const std::vector<std::string>& table2_baselines() {
  static const std::vector<std::string> b = {"kNNC", "1NNC", "SBFC", "LR", "MLP"};
  return b;
}

json StudyOptions::fingerprint() const {
  const SearchOptions& s = search;
  json j = {
      {"version", 1},
      {"folds", folds},
      {"fold_seed", fold_seed},
      {"search",
       {{"design", search_design_name(s.design)},
        {"budget", s.budget},
        {"seed", s.seed},
        {"fly_seed", s.fly_seed},
        {"expansion", {s.space.min_expansion, s.space.max_expansion}},
        {"m_scale", m_scale_name(s.space.m_scale)},
        {"max_connection_fraction", s.space.max_connection_fraction},
        {"rho", {s.space.min_rho, s.space.max_rho}},
        {"gammas", s.space.gammas},
        {"densify", s.space.search_densify},
        {"max_work", s.guard.max_work},
        {"max_memory", s.guard.max_memory},
        {"halving", {s.halving_eta, s.halving_max_rungs, s.halving_min_rows}}}},
      {"sbfc", {{"grid", sbfc.expansion_factors}, {"seed", sbfc.seed}, {"max_work", sbfc.max_work}}},
      {"sgd", {{"batch", sgd.batch}, {"hidden", sgd.hidden}, {"seed", sgd.seed}, {"rates", learning_rates}}},
      {"knn_grid", knn_grid},
  };
  if (s.space.variants != std::vector<Variant>{Variant{}}) {
    json names = json::array();
    for (const Variant& v : s.space.variants) names.push_back(variant_name(v));
    j["search"]["variants"] = names;
  }
  return j;
}

const MethodOutcome* DatasetStudy::find(const std::string& method) const {
  for (const auto& m : methods)
    if (m.method == method) return m.ok ? &m : nullptr;
  return nullptr;
}

DatasetStudy run_dataset_study(const Dataset& data, const std::string& dataset_id,
                               const StudyOptions& o, const ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = flynn::detail::thread_cpu_seconds();
  if (!data.has_labels) throw Error(fmt::format("{}: the data has no labels", data.source));
  data.require_trainable();
  if (data.n_rows < o.folds)
    throw Error(fmt::format("{}: {} rows, fewer than the {} folds", data.source, data.n_rows, o.folds));
  DatasetStudy st;
  st.dataset = dataset_id;
  st.source = data.source;
  st.rows = data.n_rows;
  st.features = data.n_features;
  st.classes = data.classes.size();
  st.settings = o.fingerprint();
  const std::vector<std::uint32_t> folds =
      stratified_folds(data.labels, data.classes.size(), o.folds, o.fold_seed);
  detail::ProgressTracker tracker(progress, 5);

  // kNNC and 1NNC share one set of neighbour lists. kNNC stays the paper's (L2-normalised
  // rows); kNN on standardised features runs on the same folds and goes into kNNC's details,
  // so reports can show "tuned kNN", the better of the two.
  KnnCvResult knn;
  MethodOutcome knnc = guarded("kNNC", [&](MethodOutcome& m) {
    const TunedKnnCvResult both = cross_validate_tuned_knn(data, folds, o.folds, o.knn_grid, o.threads);
    knn = both.l2;
    fill_cv(m, knn.per_k[knn.best]);
    m.params = fmt::format("k={}", knn.k_values[knn.best]);
    auto grid_json = [](const KnnCvResult& r) {
      json grid = json::array();
      for (std::size_t i = 0; i < r.k_values.size(); ++i)
        grid.push_back({{"k", r.k_values[i]}, {"accuracy", r.per_k[i].mean}});
      return grid;
    };
    const KnnCvResult& z = both.standardized;
    m.details = {{"grid", grid_json(knn)},
                 {"standardized",
                  {{"k", z.k_values[z.best]}, {"accuracy", z.per_k[z.best].mean},
                   {"sd", z.per_k[z.best].sd}, {"grid", grid_json(z)}}}};
  });
  MethodOutcome onenn = guarded("1NNC", [&](MethodOutcome& m) {
    if (!knnc.ok) throw Error("kNN failed: " + knnc.error);
    for (std::size_t i = 0; i < knn.k_values.size(); ++i)
      if (knn.k_values[i] == 1) fill_cv(m, knn.per_k[i]);
    if (!m.ok) throw Error("k = 1 is not in the kNN grid");
    m.params = "k=1";
  });
  onenn.seconds = knnc.seconds;  // the same search; the vote for k = 1 is free
  tracker.advance(1);

  MethodOutcome sbfc = guarded("SBFC", [&](MethodOutcome& m) {
    SbfcOptions so = o.sbfc;
    so.threads = o.threads;
    const SbfcCvResult r = cross_validate_sbfc(data, folds, o.folds, so);
    const SbfcPoint& b = r.grid[r.best];
    fill_cv(m, b.cv);
    m.params = fmt::format("m={} (m/d={:g})", b.m, b.expansion_factor);
    json grid = json::array();
    for (const auto& p : r.grid)
      grid.push_back({{"m", p.m}, {"expansion_factor", p.expansion_factor}, {"accuracy", p.cv.mean}});
    m.details = {{"grid", grid}, {"m_limit", r.m_limit}, {"skipped_factors", r.skipped_factors}};
    if (!r.skipped_factors.empty())
      m.note = fmt::format("time guard: m ≤ {} (n·d·m ≤ {:.3g}); {} grid points skipped", r.m_limit,
                           so.max_work, r.skipped_factors.size());
  });
  tracker.advance(1);

  auto sgd = [&](const char* name, bool mlp) {
    return guarded(name, [&](MethodOutcome& m) {
      const SgdCvResult r = cross_validate_one_epoch(data, folds, o.folds, mlp, o.sgd, o.learning_rates);
      fill_cv(m, r.per_rate[r.best]);
      m.params = mlp ? fmt::format("lr={:g} hidden={} epochs=1", r.learning_rates[r.best], o.sgd.hidden)
                     : fmt::format("lr={:g} epochs=1", r.learning_rates[r.best]);
      json grid = json::array();
      for (std::size_t i = 0; i < r.learning_rates.size(); ++i)
        grid.push_back({{"lr", r.learning_rates[i]}, {"accuracy", r.per_rate[i].mean}});
      m.details = {{"grid", grid}};
    });
  };
  MethodOutcome lr = sgd("LR", false);
  tracker.advance(1);
  MethodOutcome mlp = sgd("MLP", true);
  tracker.advance(1);

  MethodOutcome fly = guarded("FlyNN", [&](MethodOutcome& m) {
    TuneOptions to;
    to.search = o.search;
    to.search.threads = o.threads;
    to.calibrate = false;  // the study compares accuracies only
    const SearchOptions& so = to.search;
    const SearchResult r = tune_flynn(data, folds, o.folds, to).search;
    fill_cv(m, r.best_cv);
    m.params = fly_params(r.best_config);
    json trace = json::array();
    for (const auto& e : r.trace) {
      json t = {{"candidate", e.candidate}, {"rung", e.rung},         {"rows", e.rows},
                {"requested_m", e.requested_m}, {"config", config_to_json(e.config)},
                {"accuracy", e.accuracy},       {"gamma_accuracy", e.gamma_accuracy},
                {"seconds", e.seconds}};
      if (!e.cap_reason.empty()) t["capped"] = e.cap_reason;
      trace.push_back(std::move(t));
    }
    m.details = {{"design", search_design_name(so.design)},
                 {"best", config_to_json(r.best_config)},
                 {"evaluations", r.trace.size()},
                 {"full_evaluations", r.full_evaluations},
                 {"cost", r.cost},
                 {"capped", r.capped},
                 {"trace", trace}};
    if (r.capped > 0)
      m.note = fmt::format("guard capped m in {} of {} evaluations (n·m·s ≤ {:.3g}, memory ≤ {} MiB)",
                           r.capped, r.trace.size(), so.guard.max_work, so.guard.max_memory >> 20);
  });
  tracker.advance(1);

  st.methods = {fly, knnc, onenn, sbfc, lr, mlp};
  st.ok = true;
  st.seconds = seconds_since(start);
  st.cpu_seconds = flynn::detail::thread_cpu_seconds() - cpu_start;
  return st;
}

json to_json(const DatasetStudy& s) {
  json methods = json::array();
  for (const auto& m : s.methods) {
    json j = {{"method", m.method},     {"ok", m.ok},       {"accuracy", m.accuracy},
              {"sd", m.sd},             {"fold_accuracy", m.fold_accuracy},
              {"params", m.params},     {"seconds", m.seconds}};
    if (!std::isnan(m.balanced_accuracy)) j["balanced_accuracy"] = m.balanced_accuracy;
    if (!std::isnan(m.macro_f1)) j["macro_f1"] = m.macro_f1;
    if (!m.error.empty()) j["error"] = m.error;
    if (!m.note.empty()) j["note"] = m.note;
    if (!m.details.is_null()) j["details"] = m.details;
    methods.push_back(std::move(j));
  }
  json j = {{"dataset", s.dataset}, {"source", s.source},   {"rows", s.rows},
            {"features", s.features}, {"classes", s.classes}, {"ok", s.ok},
            {"seconds", s.seconds},   {"cpu_seconds", s.cpu_seconds},
            {"settings", s.settings}, {"methods", methods}};
  if (!s.error.empty()) j["error"] = s.error;
  return j;
}

DatasetStudy study_from_json(const json& j) {
  try {
    DatasetStudy s;
    s.dataset = j.at("dataset").get<std::string>();
    s.source = j.value("source", "");
    s.rows = j.at("rows").get<std::size_t>();
    s.features = j.at("features").get<std::size_t>();
    s.classes = j.at("classes").get<std::size_t>();
    s.ok = j.at("ok").get<bool>();
    s.error = j.value("error", "");
    s.seconds = j.value("seconds", 0.0);
    s.cpu_seconds = j.value("cpu_seconds", 0.0);
    s.settings = j.value("settings", json());
    for (const auto& mj : j.at("methods")) {
      MethodOutcome m;
      m.method = mj.at("method").get<std::string>();
      m.ok = mj.at("ok").get<bool>();
      m.error = mj.value("error", "");
      m.accuracy = mj.at("accuracy").get<double>();
      m.sd = mj.value("sd", 0.0);
      m.fold_accuracy = mj.value("fold_accuracy", std::vector<double>{});
      m.balanced_accuracy = mj.value("balanced_accuracy", std::numeric_limits<double>::quiet_NaN());
      m.macro_f1 = mj.value("macro_f1", std::numeric_limits<double>::quiet_NaN());
      m.params = mj.value("params", "");
      m.note = mj.value("note", "");
      m.seconds = mj.value("seconds", 0.0);
      if (mj.contains("details")) m.details = mj.at("details");
      s.methods.push_back(std::move(m));
    }
    return s;
  } catch (const json::exception& e) {
    throw Error(fmt::format("malformed study result: {}", e.what()));
  }
}

}  // namespace flynn::harness
