// FlyNN search: scrambled Halton design, the unit-cube → configuration mapping over the
// paper's space, the time/memory guard, and the designs' budgets and bookkeeping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "flynn/error.hpp"
#include "flynn/eval/fly_cv.hpp"
#include "flynn/eval/qmc.hpp"
#include "flynn/eval/search.hpp"
#include "test_support.hpp"

namespace flynn::eval {
namespace {

TEST(EvalSearch, ScrambledHaltonIsStratifiedAndSeeded) {
  const ScrambledHalton h(4, 9);
  // Any p^k consecutive points from 0 put one point in each interval [i/p^k, (i+1)/p^k).
  for (std::size_t dim = 0; dim < 4; ++dim) {
    const std::uint32_t p = halton_bases(4)[dim];
    const std::uint32_t cells = p * p;
    std::set<std::uint32_t> seen;
    for (std::uint32_t i = 0; i < cells; ++i) {
      const double v = h.point(i)[dim];
      ASSERT_GE(v, 0.0);
      ASSERT_LT(v, 1.0);
      seen.insert(static_cast<std::uint32_t>(v * cells));
    }
    EXPECT_EQ(seen.size(), cells) << "dimension " << dim;
  }
  EXPECT_EQ(ScrambledHalton(4, 9).point(17), h.point(17));
  EXPECT_NE(ScrambledHalton(4, 10).point(17), h.point(17));
  EXPECT_NE(h.point(0), std::vector<double>(4, 0.0));  // scrambled: no point at the origin
  EXPECT_THROW(halton_bases(0), Error);
}

TEST(EvalSearch, PointsMapOntoThePapersSpace) {
  SearchSpace sp;
  const std::uint32_t d = 40;
  const FlyConfig lo = search_point_config(sp, {0, 0, 0, 0}, d, 5);
  EXPECT_EQ(lo.m, 80u);  // 2d
  EXPECT_EQ(lo.s, 2u);
  EXPECT_EQ(lo.rho, 8u);
  EXPECT_EQ(lo.preprocess, Preprocess::Normalize);
  EXPECT_EQ(lo.seed, 5u);
  const double top = std::nextafter(1.0, 0.0);
  const FlyConfig hi = search_point_config(sp, {top, top, top, top}, d, 5);
  EXPECT_EQ(hi.m, 81920u);  // 2048d
  EXPECT_EQ(hi.s, 20u);     // ⌊0.5d⌋
  EXPECT_EQ(hi.rho, 256u);
  EXPECT_EQ(hi.preprocess, Preprocess::Densify);
  sp.m_scale = MScale::Log;
  EXPECT_EQ(search_point_config(sp, {0.5, 0.5, 0.5, 0.2}, d, 5).m, 2560u);  // 64d, the geometric middle
  sp.m_scale = MScale::Linear;
  EXPECT_EQ(search_point_config(sp, {0.5, 0.5, 0.5, 0.2}, d, 5).m, 41000u);  // 40·1025
  // ρ never reaches m/2 on small m; s stays valid on tiny d.
  const FlyConfig tiny = search_point_config(sp, {0, 0.9, top, 0}, 3, 5);
  EXPECT_LT(tiny.rho, tiny.m);
  EXPECT_LE(tiny.s, 3u);
  EXPECT_NO_THROW(tiny.validate());
  sp.search_densify = false;
  EXPECT_EQ(search_point_config(sp, {0, 0, 0, 0.9}, d, 5).preprocess, Preprocess::Normalize);
}

TEST(EvalSearch, GuardLowersMAndSaysWhy) {
  FlyConfig c = search_point_config(SearchSpace{}, {0.99, 0.99, 0.5, 0}, 100, 1);
  const std::uint32_t m0 = c.m;
  SearchGuard g;
  g.max_work = 1000.0 * 50 * 20000;  // n = 1000, s = 50 → m ≤ 20000
  EXPECT_EQ(c.s, 50u);
  const std::string why = apply_search_guard(c, 1000, 2, g);
  EXPECT_EQ(c.m, 20000u);
  EXPECT_NE(why.find(std::to_string(m0)), std::string::npos) << why;
  EXPECT_NE(why.find("n·m·s"), std::string::npos) << why;
  EXPECT_LE(fly_cv_work(c, 1000), g.max_work);
  // Memory: lifting (m·s) + counts (L·m) + winners.
  FlyConfig big = search_point_config(SearchSpace{}, {0.99, 0.99, 0.5, 0}, 100, 1);
  SearchGuard mem;
  mem.max_memory = 16 << 20;
  const std::string mwhy = apply_search_guard(big, 1000, 2, mem);
  EXPECT_NE(mwhy.find("memory"), std::string::npos);
  EXPECT_LE(fly_cv_memory_bytes(big, 1000, 2), mem.max_memory);
  // Nothing to do: no change, empty reason.
  FlyConfig small = search_point_config(SearchSpace{}, {0, 0, 0, 0}, 100, 1);
  const FlyConfig before = small;
  EXPECT_EQ(apply_search_guard(small, 1000, 2, SearchGuard{}), "");
  EXPECT_EQ(small, before);
}

TEST(EvalSearch, HaltonAndRandomSpendTheBudgetAndReportTheBest) {
  const Dataset data = test::blobs(3, 30, 6, 4, 1.0);
  const auto folds = stratified_folds(data.labels, 3, 3, 0);
  SearchOptions o;
  o.budget = 6;
  o.threads = 1;
  o.space.max_expansion = 64;
  for (SearchDesign design : {SearchDesign::Halton, SearchDesign::Random}) {
    o.design = design;
    const SearchResult r = search_flynn(data, folds, 3, o);
    ASSERT_EQ(r.trace.size(), 6u);
    EXPECT_EQ(r.full_evaluations, 6u);
    EXPECT_DOUBLE_EQ(r.cost, 6.0);
    double best = 0;
    for (const auto& e : r.trace) {
      EXPECT_EQ(e.gamma_accuracy.size(), 9u);
      EXPECT_DOUBLE_EQ(e.accuracy, *std::max_element(e.gamma_accuracy.begin(), e.gamma_accuracy.end()));
      best = std::max(best, e.accuracy);
    }
    EXPECT_DOUBLE_EQ(r.trace[r.best].accuracy, best);
    EXPECT_DOUBLE_EQ(r.best_cv.mean, best);
    EXPECT_EQ(r.best_config, r.trace[r.best].config);
    // Re-evaluating the reported best configuration reproduces its accuracy.
    const FlyCvEvaluator ev(data, folds, 3);
    EXPECT_DOUBLE_EQ(ev.evaluate(r.best_config, {r.best_config.gamma})[0].mean, best);
  }
  o.budget = 0;
  EXPECT_THROW(search_flynn(data, folds, 3, o), Error);
}

TEST(EvalSearch, HalvingPromotesTheBestAndStaysWithinBudget) {
  const Dataset data = test::blobs(2, 90, 5, 6, 1.2);  // 180 rows
  const auto folds = stratified_folds(data.labels, 2, 3, 0);
  SearchOptions o;
  o.design = SearchDesign::HaltonHalving;
  o.budget = 4;
  o.threads = 1;
  o.halving_min_rows = 20;  // 180/9 = 20 rows: three rungs
  o.space.max_expansion = 32;
  const SearchResult r = search_flynn(data, folds, 3, o);
  // N0 = 4·9/3 = 12 on 20 rows, 4 on 60 rows, 1 on all 180.
  std::size_t per_rung[3] = {0, 0, 0};
  for (const auto& e : r.trace) ++per_rung[e.rung];
  EXPECT_EQ(per_rung[0], 12u);
  EXPECT_EQ(per_rung[1], 4u);
  EXPECT_EQ(per_rung[2], 1u);
  EXPECT_EQ(r.full_evaluations, 1u);
  EXPECT_LE(r.cost, 4.0 + 1e-9);
  EXPECT_EQ(r.trace[r.best].rung, 2u);
  EXPECT_EQ(r.trace[r.best].rows, 180u);
  // Rung 1's candidates are rung 0's best four.
  std::vector<std::pair<double, std::size_t>> rung0;
  std::set<std::size_t> rung1;
  for (const auto& e : r.trace) {
    if (e.rung == 0) rung0.emplace_back(-e.accuracy, e.candidate);
    if (e.rung == 1) rung1.insert(e.candidate);
  }
  std::stable_sort(rung0.begin(), rung0.end());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(rung1.count(rung0[i].second)) << i;
}

}  // namespace
}  // namespace flynn::eval
