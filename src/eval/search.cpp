#include "flynn/eval/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/detail/progress_tracker.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/eval/qmc.hpp"
#include "flynn/random.hpp"

namespace flynn::eval {

namespace {

constexpr std::size_t kPaperDims = 4;  // m, s, ρ, densify (+ the variant when several)

// A design point generator: Halton (also the first rung of HaltonHalving) or random.
class Design {
 public:
  Design(SearchDesign design, std::uint64_t seed, std::size_t dims)
      : random_(design == SearchDesign::Random),
        dims_(dims),
        halton_(dims, seed),
        rng_(SeededRng::keyed(seed, RngStream::Search, 1)) {}
  std::vector<double> next() {
    if (!random_) return halton_.point(index_++);
    std::vector<double> u(dims_);
    for (double& v : u) v = rng_.uniform01();
    return u;
  }

 private:
  bool random_;
  std::size_t dims_;
  ScrambledHalton halton_;
  SeededRng rng_;
  std::uint64_t index_ = 0;
};

SearchEvaluation evaluate_candidate(const FlyCvEvaluator& ev, const SearchOptions& o,
                                    std::size_t candidate, std::uint32_t rung,
                                    const std::vector<double>& u, std::vector<CvResult>* cv_out) {
  const Dataset& data = ev.data();
  SearchEvaluation e;
  e.candidate = candidate;
  e.rung = rung;
  e.rows = data.n_rows;
  FlyConfig cfg = search_point_config(o.space, u, static_cast<std::uint32_t>(data.n_features), o.fly_seed);
  e.requested_m = cfg.m;
  e.cap_reason = apply_search_guard(cfg, data.n_rows, data.classes.size(), o.guard);
  cfg.class_weight = o.class_weight;
  const std::vector<CvResult> cv = ev.evaluate(cfg, o.space.gammas, o.threads, {}, o.metric == CvMetric::LogLoss);
  std::size_t best = 0;
  for (std::size_t g = 0; g < cv.size(); ++g) {
    e.gamma_accuracy.push_back(cv[g].metric(o.metric));
    if (cv[g].metric(o.metric) > cv[best].metric(o.metric)) best = g;
  }
  e.accuracy = cv[best].metric(o.metric);
  cfg.gamma = o.space.gammas[best];
  e.config = cfg;
  e.seconds = cv[best].seconds;
  if (cv_out) *cv_out = cv;
  return e;
}

}  // namespace

SearchDesign parse_search_design(const std::string& name) {
  if (name == "halton") return SearchDesign::Halton;
  if (name == "random") return SearchDesign::Random;
  if (name == "halving" || name == "halton-halving") return SearchDesign::HaltonHalving;
  throw Error(fmt::format("search design '{}': expected halton, random or halving", name));
}

const char* search_design_name(SearchDesign d) {
  switch (d) {
    case SearchDesign::Halton: return "halton";
    case SearchDesign::Random: return "random";
    case SearchDesign::HaltonHalving: return "halving";
  }
  return "?";
}

MScale parse_m_scale(const std::string& name) {
  if (name == "linear") return MScale::Linear;
  if (name == "log") return MScale::Log;
  throw Error(fmt::format("m scale '{}': expected linear or log", name));
}

const char* m_scale_name(MScale s) { return s == MScale::Log ? "log" : "linear"; }

std::size_t search_dimensions(const SearchSpace& sp) { return kPaperDims + (sp.variants.size() > 1 ? 1 : 0); }

FlyConfig search_point_config(const SearchSpace& sp, const std::vector<double>& u, std::uint32_t d,
                              std::uint64_t fly_seed) {
  if (sp.variants.empty()) throw Error("search: no variant to search");
  if (u.size() < search_dimensions(sp))
    throw Error(fmt::format("search point: needs {} coordinates", search_dimensions(sp)));
  if (d == 0) throw Error("search point: d must be at least 1");
  FlyConfig c;
  c.input_dim = d;
  c.seed = fly_seed;
  c.gamma = 0.0;
  c.preprocess = sp.search_densify && u[3] >= 0.5 ? Preprocess::Densify : Preprocess::Normalize;
  if (sp.variants.size() > 1) {
    const auto v = static_cast<std::size_t>(std::floor(u[kPaperDims] * static_cast<double>(sp.variants.size())));
    c.variant = sp.variants[std::min(v, sp.variants.size() - 1)];
  } else {
    c.variant = sp.variants.front();
  }
  if (!c.variant.is_paper()) c.preprocess = Preprocess::Normalize;  // densify is the paper's only
  c.filter_scoring = Defaults::filter_scoring(c.variant);  // each variant scores as its default does
  c.paper_half_min_columns = Defaults::paper_half_min_columns_for(c.variant, d);  // and hashes so
  const double ef = sp.m_scale == MScale::Log
                        ? sp.min_expansion * std::pow(sp.max_expansion / sp.min_expansion, u[0])
                        : sp.min_expansion + u[0] * (sp.max_expansion - sp.min_expansion);
  c.m = static_cast<std::uint32_t>(
      std::max(3.0, std::floor(ef * static_cast<double>(d) + 1e-9)));
  const auto s_max = static_cast<std::uint32_t>(std::floor(sp.max_connection_fraction * d + 1e-9));
  if (s_max < 2) {
    c.s = std::min<std::uint32_t>(2, d);
  } else {
    c.s = std::min<std::uint32_t>(s_max, 2 + static_cast<std::uint32_t>(std::floor(u[1] * (s_max - 1))));
  }
  const double rho = std::round(sp.min_rho * std::pow(double(sp.max_rho) / sp.min_rho, u[2]));
  c.rho = static_cast<std::uint32_t>(std::clamp<double>(rho, sp.min_rho, sp.max_rho));
  c.rho = std::max<std::uint32_t>(1, std::min<std::uint32_t>(c.rho, c.m / 2));
  return c;
}

std::string apply_search_guard(FlyConfig& c, std::size_t n, std::size_t L, const SearchGuard& g) {
  const std::uint32_t floor_m = std::max<std::uint32_t>(2 * c.input_dim, c.rho + 1);
  std::string reason;
  double limit = static_cast<double>(c.m);
  const double work = fly_cv_work(c, n);
  if (work > g.max_work) {
    limit = std::min(limit, std::floor(g.max_work / (static_cast<double>(n) * c.s)));
    reason = fmt::format("n·m·s = {:.3g} > {:.3g}", work, g.max_work);
  }
  const std::uint64_t mem = fly_cv_memory_bytes(c, n, L);
  if (mem > g.max_memory) {
    const double fixed = static_cast<double>(fly_cv_memory_bytes(c, n, L) -
                                             (std::uint64_t(c.m) * c.s * 4 + std::uint64_t(L) * c.m * 4));
    const double per_unit = 4.0 * (static_cast<double>(c.s) + static_cast<double>(L));
    limit = std::min(limit, std::floor((static_cast<double>(g.max_memory) - fixed) / per_unit));
    if (!reason.empty()) reason += "; ";
    reason += fmt::format("memory {:.0f} MiB > {:.0f} MiB", mem / 1048576.0, g.max_memory / 1048576.0);
  }
  if (reason.empty()) return "";
  const auto new_m = static_cast<std::uint32_t>(std::max<double>(floor_m, limit));
  reason = fmt::format("m {} → {} ({})", c.m, new_m, reason);
  c.m = std::min(c.m, new_m);
  return reason;
}

namespace {

void check_search_options(const SearchOptions& o) {
  if (o.budget == 0) throw Error("search: the budget must be at least 1 evaluation");
  if (o.space.gammas.empty()) throw Error("search: empty γ grid");
  if (!(o.space.min_expansion > 0 && o.space.max_expansion >= o.space.min_expansion))
    throw Error("search: bad expansion-factor range");
  if (o.space.min_rho < 1 || o.space.max_rho < o.space.min_rho) throw Error("search: bad ρ range");
}

// The candidates each rung evaluates: rungs hold fractions η^-(R-1), …, 1/η, 1 of the
// rows (one rung unless halving), the smallest at least min_rows rows and two per fold.
std::vector<std::size_t> rung_sizes(std::size_t n_rows, std::uint32_t k_folds, const SearchOptions& o) {
  std::uint32_t rungs = 1;
  const std::uint32_t eta = std::max<std::uint32_t>(2, o.halving_eta);
  if (o.design == SearchDesign::HaltonHalving) {
    const double min_rows = static_cast<double>(std::max<std::size_t>(o.halving_min_rows, 2 * k_folds));
    while (rungs < o.halving_max_rungs && static_cast<double>(n_rows) / std::pow(eta, rungs) >= min_rows) ++rungs;
  }
  std::vector<std::size_t> per_rung(rungs);
  per_rung[0] = static_cast<std::size_t>(std::max(1.0, std::round(o.budget * std::pow(eta, rungs - 1) / rungs)));
  for (std::uint32_t r = 1; r < rungs; ++r) per_rung[r] = std::max<std::size_t>(1, per_rung[r - 1] / eta);
  return per_rung;
}

// Each subsample rung's rows and folds, made up front so the progress total (rows to be
// evaluated) is exact from the start; the last rung is all rows.
struct Rungs {
  std::vector<std::unique_ptr<Dataset>> rows;
  std::vector<std::unique_ptr<FlyCvEvaluator>> evaluators;
  std::size_t total_rows = 0;  // rows the planned evaluations read
};

Rungs subsample_rungs(const Dataset& data, const std::vector<std::size_t>& per_rung, std::uint32_t k_folds,
                      const SearchOptions& o) {
  const std::size_t rungs = per_rung.size();
  const std::uint32_t eta = std::max<std::uint32_t>(2, o.halving_eta);
  Rungs out;
  out.rows.resize(rungs);
  out.evaluators.resize(rungs);
  out.total_rows = per_rung[rungs - 1] * data.n_rows;
  for (std::uint32_t r = 0; r + 1 < rungs; ++r) {
    const double q = std::pow(eta, -static_cast<double>(rungs - 1 - r));
    out.rows[r] = std::make_unique<Dataset>(data.subset(stratified_subsample(data, q, o.seed)));
    const Dataset& sub = *out.rows[r];
    out.evaluators[r] = std::make_unique<FlyCvEvaluator>(
        sub, stratified_folds(sub.labels, sub.classes.size(), k_folds, o.seed + 1 + r), k_folds);
    out.total_rows += per_rung[r] * sub.n_rows;
  }
  return out;
}

// A search in progress: its result so far, its progress and its time limit.
struct SearchRun {
  const Dataset& data;
  const SearchOptions& o;
  std::chrono::steady_clock::time_point start;
  SearchResult& res;
  detail::ProgressTracker& tracker;
  std::size_t rows_done = 0;
  double best_metric = -std::numeric_limits<double>::infinity();  // log-loss's metric is negative

  bool out_of_time() const {
    return o.time_limit_seconds > 0.0 && detail::seconds_since(start) >= o.time_limit_seconds;
  }

  // Evaluates the points `alive` on rung r (`last`: all rows) and returns them as
  // (−metric, point) pairs. Past the time limit the rung stops, except that the full-data
  // rung evaluates at least one.
  std::vector<std::pair<double, std::size_t>> rung(std::uint32_t r, const FlyCvEvaluator& ev, bool last,
                                                   const std::vector<std::size_t>& alive,
                                                   const std::vector<std::vector<double>>& points) {
    std::vector<std::pair<double, std::size_t>> ranked;
    for (std::size_t cand : alive) {
      if (out_of_time() && (!last || res.full_evaluations > 0) && !(r == 0 && ranked.empty())) {
        res.time_limited = true;
        break;
      }
      std::vector<CvResult> cv;
      SearchEvaluation e = evaluate_candidate(ev, o, cand, r, points[cand], last ? &cv : nullptr);
      res.cost += static_cast<double>(e.rows) / static_cast<double>(data.n_rows);
      if (!e.cap_reason.empty()) ++res.capped;
      ranked.emplace_back(-e.accuracy, cand);
      if (last) keep_if_best(e, cv);
      rows_done += e.rows;
      tracker.advance(e.rows);
      res.trace.push_back(std::move(e));
    }
    return ranked;
  }

  // A full-data evaluation: the best so far when its metric is higher.
  void keep_if_best(const SearchEvaluation& e, const std::vector<CvResult>& cv) {
    ++res.full_evaluations;
    if (!(e.accuracy > best_metric)) return;
    best_metric = e.accuracy;
    res.best = res.trace.size();
    res.best_config = e.config;
    // The γ the evaluation chose: the first of the grid with its best accuracy.
    for (std::size_t g = 0; g < cv.size(); ++g)
      if (cv[g].metric(o.metric) == e.accuracy) {
        res.best_cv = cv[g];
        break;
      }
  }
};

}  // namespace

SearchResult search_flynn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                          std::uint32_t k_folds, const SearchOptions& o, const ProgressFn& progress) {
  const auto start = std::chrono::steady_clock::now();
  check_search_options(o);
  const FlyCvEvaluator full(data, fold_of_row, k_folds);
  SearchResult res;
  const std::vector<std::size_t> per_rung = rung_sizes(data.n_rows, k_folds, o);
  const auto rungs = static_cast<std::uint32_t>(per_rung.size());
  res.planned_evaluations = std::accumulate(per_rung.begin(), per_rung.end(), std::size_t{0});
  const Rungs sub = subsample_rungs(data, per_rung, k_folds, o);
  detail::ProgressTracker tracker(progress, sub.total_rows);
  SearchRun run{data, o, start, res, tracker};

  Design design(o.design, o.seed, search_dimensions(o.space));
  std::vector<std::vector<double>> points(per_rung[0]);
  for (auto& p : points) p = design.next();
  std::vector<std::size_t> alive(per_rung[0]);
  std::iota(alive.begin(), alive.end(), 0);
  for (std::uint32_t r = 0; r < rungs; ++r) {
    const bool last = r + 1 == rungs;
    std::vector<std::pair<double, std::size_t>> ranked =
        run.rung(r, last ? full : *sub.evaluators[r], last, alive, points);
    if (last) break;
    std::stable_sort(ranked.begin(), ranked.end());  // best accuracy first, then earlier point
    // Out of time: only the best so far goes on, straight to the full-data rung.
    const std::size_t keep = res.time_limited ? 1 : per_rung[r + 1];
    alive.clear();
    for (std::size_t i = 0; i < std::min(keep, ranked.size()); ++i) alive.push_back(ranked[i].second);
    std::sort(alive.begin(), alive.end());
    if (res.time_limited) r = rungs - 2;  // the loop's ++r lands on the full-data rung
  }
  // A cut-short search never reaches the planned total: close the progress line.
  if (run.rows_done < sub.total_rows) tracker.advance(sub.total_rows - run.rows_done);
  res.seconds = detail::seconds_since(start);
  return res;
}

}  // namespace flynn::eval
