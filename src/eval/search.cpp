#include "flynn/eval/search.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

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

// A candidate: a point of the design, or a configuration given (SearchOptions::first_candidates).
struct Candidate {
  std::vector<double> point;  // empty for a given configuration
  FlyConfig given;
};

// The configuration a candidate is evaluated with on `data` (guard applied), and what the
// guard changed.
FlyConfig candidate_config(const Dataset& data, const SearchOptions& o, const Candidate& c,
                           std::uint32_t* requested_m = nullptr, std::string* cap_reason = nullptr) {
  FlyConfig cfg = c.point.empty()
                      ? c.given
                      : search_point_config(o.space, c.point, static_cast<std::uint32_t>(data.n_features), o.fly_seed);
  if (requested_m) *requested_m = cfg.m;
  const std::string reason = apply_search_guard(cfg, data.n_rows, data.classes.size(), o.guard);
  if (cap_reason) *cap_reason = reason;
  cfg.class_weight = o.class_weight;
  return cfg;
}

SearchEvaluation evaluate_candidate(const FlyCvEvaluator& ev, const SearchOptions& o,
                                    std::size_t candidate, std::uint32_t rung,
                                    const Candidate& u, std::vector<CvResult>* cv_out) {
  const Dataset& data = ev.data();
  SearchEvaluation e;
  e.candidate = candidate;
  e.rung = rung;
  e.rows = data.n_rows;
  FlyConfig cfg = candidate_config(data, o, u, &e.requested_m, &e.cap_reason);
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

// The rungs of the search: fractions η^-(R-1), …, 1/η, 1 of the rows, how many candidates
// each evaluates, and each subsample rung's data and folds, made up front so the progress
// total (rows to be evaluated) is exact from the start.
struct Rungs {
  std::vector<std::size_t> per_rung;
  std::vector<std::unique_ptr<Dataset>> sub;
  std::vector<std::unique_ptr<FlyCvEvaluator>> sub_ev;
  std::size_t total_rows = 0;

  Rungs(const Dataset& data, std::uint32_t k_folds, const SearchOptions& o) {
    std::uint32_t rungs = 1;
    const std::uint32_t eta = std::max<std::uint32_t>(2, o.halving_eta);
    if (o.design == SearchDesign::HaltonHalving) {
      // The smallest rung must keep min_rows rows, and at least two per fold.
      const double min_rows = static_cast<double>(std::max<std::size_t>(o.halving_min_rows, 2 * k_folds));
      while (rungs < o.halving_max_rungs && static_cast<double>(data.n_rows) / std::pow(eta, rungs) >= min_rows)
        ++rungs;
    }
    per_rung.resize(rungs);
    per_rung[0] = static_cast<std::size_t>(std::max(1.0, std::round(o.budget * std::pow(eta, rungs - 1) / rungs)));
    for (std::uint32_t r = 1; r < rungs; ++r) per_rung[r] = std::max<std::size_t>(1, per_rung[r - 1] / eta);
    per_rung[0] += o.first_candidates.size();  // evaluated first, beside the design's points
    sub.resize(rungs);
    sub_ev.resize(rungs);
    total_rows = per_rung[rungs - 1] * data.n_rows;
    for (std::uint32_t r = 0; r + 1 < rungs; ++r) {
      const double q = std::pow(eta, -static_cast<double>(rungs - 1 - r));
      sub[r] = std::make_unique<Dataset>(data.subset(stratified_subsample(data, q, o.seed)));
      sub_ev[r] = std::make_unique<FlyCvEvaluator>(
          *sub[r], stratified_folds(sub[r]->labels, sub[r]->classes.size(), k_folds, o.seed + 1 + r), k_folds);
      total_rows += per_rung[r] * sub[r]->n_rows;
    }
  }
  std::uint32_t count() const { return static_cast<std::uint32_t>(per_rung.size()); }
};

// The time limit: a candidate starts only when its predicted time, the full-data
// evaluation of the rung's leader (when that is still to come) and the reserve after the
// search fit before it.
class SearchClock {
 public:
  SearchClock(const Dataset& data, std::uint32_t k, const SearchOptions& o)
      : start_(std::chrono::steady_clock::now()), data_(data), k_(k), o_(o) {}
  double work(const FlyConfig& c, std::size_t rows) const {
    return cv_evaluation_work(c, rows, data_.classes.size(), k_, o_.space.gammas.size());
  }
  bool out_of_time(const WorkRate& rate, const FlyConfig& next, std::size_t rows, bool last) const {
    if (o_.time_limit_seconds <= 0.0) return false;
    const double lead = leader ? rate.seconds_for(work(*leader, data_.n_rows)) : 0.0;
    const double after = (last ? 0.0 : lead) + o_.reserve_full_evaluations * lead;
    return detail::seconds_since(start_) + rate.seconds_for(work(next, rows)) + after >= o_.time_limit_seconds;
  }
  // The options of the full-data evaluation that must happen: with a time limit and a
  // measured rate, the guard's hashing work n·m·s lowered so that it and the reserve after it
  // fit in the time left with kPlanMargin to spare (m is then capped as the guard caps it,
  // never below its floor).
  SearchOptions full_data_options(const WorkRate& rate, const FlyConfig& c) const {
    SearchOptions o = o_;
    const double per_second = rate.seconds_for(1.0);
    if (o_.time_limit_seconds <= 0.0 || per_second <= 0.0) return o;
    const double left = o_.time_limit_seconds - seconds();
    const double n = static_cast<double>(data_.n_rows);
    // cv_evaluation_work is a·m + b (hashing and winners per unit, scoring): solve it for m.
    FlyConfig one = c;
    one.m = 1;
    const double a = (work(c, data_.n_rows) - work(one, data_.n_rows)) / (c.m - 1.0);
    const double b = work(one, data_.n_rows) - a;
    const double m = (left / (kPlanMargin * (1.0 + o_.reserve_full_evaluations) * per_second) - b) / a;
    o.guard.max_work = std::min(o.guard.max_work, std::max(0.0, m) * n * c.s);
    return o;
  }
  double seconds() const { return detail::seconds_since(start_); }
  std::optional<FlyConfig> leader;  // the best candidate of the current rung so far

 private:
  std::chrono::steady_clock::time_point start_;
  const Dataset& data_;
  std::uint32_t k_;
  const SearchOptions& o_;
};

// A full-data evaluation: the best so far when it scores higher (a tie keeps the earlier).
void record_full_evaluation(SearchResult& res, const SearchEvaluation& e, const std::vector<CvResult>& cv,
                            CvMetric metric, double& best_acc) {
  ++res.full_evaluations;
  if (e.accuracy <= best_acc) return;
  best_acc = e.accuracy;
  res.best = res.trace.size();
  res.best_config = e.config;
  // The γ the evaluation chose: the first of the grid with its best accuracy.
  for (std::size_t g = 0; g < cv.size(); ++g)
    if (cv[g].metric(metric) == e.accuracy) {
      res.best_cv = cv[g];
      break;
    }
}

}  // namespace

SearchResult search_flynn(const Dataset& data, const std::vector<std::uint32_t>& fold_of_row,
                          std::uint32_t k_folds, const SearchOptions& o, const ProgressFn& progress) {
  SearchClock clock(data, k_folds, o);
  check_search_options(o);
  const FlyCvEvaluator full(data, fold_of_row, k_folds);
  SearchResult res;
  Rungs rungs(data, k_folds, o);
  res.planned_evaluations = std::accumulate(rungs.per_rung.begin(), rungs.per_rung.end(), std::size_t{0});
  detail::ProgressTracker tracker(progress, rungs.total_rows);
  std::size_t rows_done = 0;

  Design design(o.design, o.seed, search_dimensions(o.space));
  std::vector<Candidate> points;
  for (const FlyConfig& c : o.first_candidates) points.push_back({{}, c});
  while (points.size() < rungs.per_rung[0]) points.push_back({design.next(), {}});
  std::vector<std::size_t> alive(rungs.per_rung[0]);
  std::iota(alive.begin(), alive.end(), 0);

  double best_acc = -std::numeric_limits<double>::infinity();  // log-loss's metric is negative
  for (std::uint32_t r = 0; r < rungs.count(); ++r) {
    const bool last = r + 1 == rungs.count();
    const FlyCvEvaluator* ev = last ? &full : rungs.sub_ev[r].get();
    std::vector<std::pair<double, std::size_t>> ranked;
    clock.leader.reset();
    for (std::size_t cand : alive) {
      // Out of time: stop this rung, except that the full-data rung evaluates at least one.
      if (clock.out_of_time(res.rate, candidate_config(ev->data(), o, points[cand]), ev->data().n_rows, last) &&
          (!last || res.full_evaluations > 0) && !(r == 0 && ranked.empty())) {
        res.time_limited = true;
        break;
      }
      std::vector<CvResult> cv;
      // The one full-data evaluation that must happen fits the time left, its m capped if
      // need be; later ones start only when they fit as they are.
      const bool must = last && res.full_evaluations == 0;
      const SearchOptions eo = must ? clock.full_data_options(res.rate, candidate_config(data, o, points[cand])) : o;
      SearchEvaluation e = evaluate_candidate(*ev, eo, cand, r, points[cand], last ? &cv : nullptr);
      if (eo.guard.max_work < o.guard.max_work && !e.cap_reason.empty()) e.cap_reason += " to fit the time limit";
      res.rate.add(clock.work(e.config, e.rows), e.seconds);
      res.cost += static_cast<double>(e.rows) / static_cast<double>(data.n_rows);
      if (!e.cap_reason.empty()) ++res.capped;
      if (ranked.empty() || -e.accuracy < std::min_element(ranked.begin(), ranked.end())->first)
        clock.leader = e.config;
      ranked.emplace_back(-e.accuracy, cand);
      if (last) record_full_evaluation(res, e, cv, o.metric, best_acc);
      rows_done += e.rows;
      tracker.advance(e.rows);
      res.trace.push_back(std::move(e));
    }
    if (last) break;
    std::stable_sort(ranked.begin(), ranked.end());  // best accuracy first, then earlier point
    // Out of time: only the best so far goes on, straight to the full-data rung.
    const std::size_t keep = res.time_limited ? 1 : rungs.per_rung[r + 1];
    alive.clear();
    for (std::size_t i = 0; i < std::min(keep, ranked.size()); ++i) alive.push_back(ranked[i].second);
    std::sort(alive.begin(), alive.end());
    if (res.time_limited) r = rungs.count() - 2;  // the loop's ++r lands on the full-data rung
  }
  // A cut-short search never reaches the planned total: close the progress line.
  if (rows_done < rungs.total_rows) tracker.advance(rungs.total_rows - rows_done);
  res.seconds = clock.seconds();
  return res;
}

}  // namespace flynn::eval
