// Latency of small calls: predicting 1, 64 or 2048 rows, and learning one row, with a
// trained Digits-sized model (d = 64, default m = 16384, 10 classes), at 1, 2 and 4
// threads; and 1, 8, 64 and 1024 rows at the Fashion-MNIST shapes (d = 784, pixel-like
// rows, 10 classes) of the defaults and of the paper's setting, one thread, with the one-row
// path (fly_hasher.hpp) and without it (the block kernels only), and learning 1 or 1024
// rows there. FLYNN_SIMD_TARGET=avx2 runs them as on a CPU without AVX-512. These are the calls where
// fixed per-call costs (threads, buffers, score tables) and the kernels' shape matter more
// than the hashing itself: per row (items_per_second), one row should cost about what a
// row of a large batch costs.
//
//   build/bench/flynn_bench --benchmark_filter=Latency
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/data_view.hpp"
#include "flynn/random.hpp"
#include "flynn/scoring.hpp"

namespace flynn {
namespace {

constexpr std::uint32_t kDim = 64;
constexpr std::uint32_t kClasses = 10;

// Pixel-like rows (integers 0..16, as in Digits), class by a hidden rule.
struct Rows {
  std::vector<float> x;
  std::vector<std::uint32_t> y;
};

Rows make_rows(std::size_t n, std::uint64_t seed, std::uint32_t dim = kDim) {
  SeededRng r(seed);
  Rows rows;
  rows.x.resize(n * dim);
  rows.y.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto cls = static_cast<std::uint32_t>(r.uniform_below(kClasses));
    rows.y[i] = cls;
    for (std::uint32_t j = 0; j < dim; ++j)
      rows.x[i * dim + j] = static_cast<float>(r.uniform_below(9) + (j % kClasses == cls ? 8 : 0));
  }
  return rows;
}

LabelSet class_names() {
  std::vector<std::string> names;
  for (std::uint32_t c = 0; c < kClasses; ++c) names.push_back(std::to_string(c));
  return LabelSet(std::move(names));
}

FlyNN trained_model(int threads) {
  FlyNN model(HyperParams{}.resolve(kDim, kClasses), class_names(), threads);
  const Rows train = make_rows(2000, 1);
  model.fit(DataView(train.x.data(), train.y.size(), kDim), train.y);
  return model;
}

// args: rows per call, threads
void BM_PredictLatency(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const FlyNN model = trained_model(threads);
  const Rows query = make_rows(n, 2);
  const DataView view(query.x.data(), n, kDim);
  benchmark::DoNotOptimize(model.predict(view));  // the one-row layout, built on first use
  for (auto _ : state) benchmark::DoNotOptimize(model.predict(view));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_PredictLatency)
    ->ArgNames({"rows", "threads"})
    ->ArgsProduct({{1, 64, 2048}, {1, 2, 4}})
    ->Unit(benchmark::kMicrosecond);

// args: threads. One partial_fit of one row (what an online learner does per example).
void BM_LearnOneRowLatency(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  FlyNN model = trained_model(threads);
  const Rows one = make_rows(1, 3);
  const DataView view(one.x.data(), 1, kDim);
  for (auto _ : state) model.partial_fit(view, one.y);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_LearnOneRowLatency)->ArgNames({"threads"})->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMicrosecond);

// Fashion-MNIST's shape: 784 pixel columns, 10 classes; the defaults (arg 0) or the paper's
// setting (arg 1: m = 138·d, s = 0.105·d, ρ = 8, γ = 0.8, the paper's method; as
// harness::fashion_mnist_paper_params).
constexpr std::uint32_t kFashionDim = 784;

// Pixel-like rows: about half zeros, the rest 1..255, brighter where a column's index
// matches the class (as make_rows does).
Rows fashion_rows(std::size_t n, std::uint64_t seed) {
  SeededRng r(seed);
  Rows rows;
  rows.x.resize(n * kFashionDim);
  rows.y.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto cls = static_cast<std::uint32_t>(r.uniform_below(kClasses));
    rows.y[i] = cls;
    for (std::uint32_t j = 0; j < kFashionDim; ++j) {
      const bool lit = r.uniform01() < (j % kClasses == cls ? 0.8 : 0.45);
      rows.x[i * kFashionDim + j] = lit ? static_cast<float>(1 + r.uniform_below(255)) : 0.0f;
    }
  }
  return rows;
}

FlyNN& fashion_model(bool paper) {
  static FlyNN* models[2] = {nullptr, nullptr};
  if (!models[paper]) {
    HyperParams p;
    if (paper) {
      p.expansion_factor = 138;
      p.connection_sparsity = 0.105;
      p.wta_nnz = 8;
      p.gamma = 0.8;
      p.variant = Variant{};
    }
    auto* model = new FlyNN(p.resolve(kFashionDim, kClasses), class_names(), 1);
    const Rows train = fashion_rows(1000, 4);
    model->fit(DataView(train.x.data(), train.y.size(), kFashionDim), train.y);
    models[paper] = model;  // kept for the process: built once for every row count
  }
  return *models[paper];
}

// args: rows per call, setting (0 defaults, 1 paper), one-row path (1 on, 0 off).
void BM_FashionPredictLatency(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  FlyNN& model = fashion_model(state.range(1) == 1);
  model.set_one_row_path(state.range(2) == 1);
  const Rows query = fashion_rows(n, 5);
  const DataView view(query.x.data(), n, kFashionDim);
  benchmark::DoNotOptimize(model.predict(view));  // the one-row layout, built on first use
  for (auto _ : state) benchmark::DoNotOptimize(model.predict(view));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  model.set_one_row_path(true);
}
// What every predict call paid before the scorer was kept with the model: building it
// (the γ^count table or the seen bits, m·L) from the counts.
void BM_FilterScorerBuild(benchmark::State& state) {
  const FlyNN& model = fashion_model(state.range(0) == 1);
  for (auto _ : state) {
    const FilterScorer scorer(model.counts(), model.config().gamma, model.config().rho);
    benchmark::DoNotOptimize(&scorer);
  }
}
BENCHMARK(BM_FilterScorerBuild)->ArgNames({"paper"})->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// args: rows per call, setting (0 defaults, 1 paper). partial_fit of that many rows (one
// row: what an online learner does per example), per row as items_per_second, to compare
// one row with a row of a 1024-row call.
void BM_FashionLearnLatency(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  FlyNN& model = fashion_model(state.range(1) == 1);
  const Rows rows = fashion_rows(n, 6);
  const DataView view(rows.x.data(), n, kFashionDim);
  model.partial_fit(view, rows.y);  // the one-row layout, built on first use
  for (auto _ : state) model.partial_fit(view, rows.y);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_FashionLearnLatency)
    ->ArgNames({"rows", "paper"})
    ->ArgsProduct({{1, 1024}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_FashionPredictLatency)
    ->ArgNames({"rows", "paper", "one_row"})
    ->ArgsProduct({{1, 8, 64, 1024}, {0, 1}, {1}})
    ->Args({1, 0, 0})
    ->Args({1, 1, 0})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace flynn
