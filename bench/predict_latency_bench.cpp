// Latency of small calls: predicting 1, 64 or 2048 rows, and learning one row, with a
// trained Digits-sized model (d = 64, default m = 16384, 10 classes), at 1, 2 and 4
// threads. These are the calls where fixed per-call costs (threads, buffers, score
// tables) matter more than the hashing itself.
//
//   build/bench/flynn_bench --benchmark_filter=Latency
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/data_view.hpp"
#include "flynn/random.hpp"

namespace flynn {
namespace {

constexpr std::uint32_t kDim = 64;
constexpr std::uint32_t kClasses = 10;

// Pixel-like rows (integers 0..16, as in Digits), class by a hidden rule.
struct Rows {
  std::vector<float> x;
  std::vector<std::uint32_t> y;
};

Rows make_rows(std::size_t n, std::uint64_t seed) {
  SeededRng r(seed);
  Rows rows;
  rows.x.resize(n * kDim);
  rows.y.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto cls = static_cast<std::uint32_t>(r.uniform_below(kClasses));
    rows.y[i] = cls;
    for (std::uint32_t j = 0; j < kDim; ++j)
      rows.x[i * kDim + j] = static_cast<float>(r.uniform_below(9) + (j % kClasses == cls ? 8 : 0));
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

}  // namespace
}  // namespace flynn
