// Micro-benchmarks of the hot paths: FlyHash (rows/s and additions/s at several d, m, s, ρ,
// float and exact-integer paths, dense and sparse rows), top-ρ selection, scoring.
//
//   build/bench/flynn_bench                       all of them
//   build/bench/flynn_bench --benchmark_filter=Hash   a subset
#include <benchmark/benchmark.h>

#include <vector>

#include "core/topk.hpp"
#include "flynn/class_counts.hpp"
#include "flynn/fly_hasher.hpp"
#include "flynn/random.hpp"
#include "flynn/scoring.hpp"

namespace flynn {
namespace {

FlyConfig config(std::uint32_t d, std::uint32_t m, std::uint32_t s, std::uint32_t rho) {
  FlyConfig c;
  c.input_dim = d;
  c.m = m;
  c.s = s;
  c.rho = rho;
  c.gamma = 0.8;
  c.seed = Defaults::seed;
  c.preprocess = Preprocess::Normalize;
  return c;
}

// Pixel-like rows: integers 0..255, about half zero (like Fashion-MNIST), or Gaussian
// floats; `density` < 1 zeroes the rest.
std::vector<float> rows(std::size_t n, std::size_t d, bool integers, double density) {
  SeededRng r(1);
  std::vector<float> x(n * d);
  for (auto& v : x) {
    if (r.uniform01() >= density) {
      v = 0.0f;
    } else {
      v = integers ? static_cast<float>(r.uniform_below(256)) : static_cast<float>(r.normal());
    }
  }
  return x;
}

// args: d, m, s, rho, integers (0/1), density percent
void BM_Hash(benchmark::State& state) {
  const auto d = static_cast<std::uint32_t>(state.range(0));
  const auto m = static_cast<std::uint32_t>(state.range(1));
  const auto s = static_cast<std::uint32_t>(state.range(2));
  const auto rho = static_cast<std::uint32_t>(state.range(3));
  const bool ints = state.range(4) != 0;
  const double density = state.range(5) / 100.0;
  const std::size_t n = 1024;
  const FlyHasher h(config(d, m, s, rho), 1);
  const auto x = rows(n, d, ints, density);
  std::vector<std::uint32_t> w(n * rho);
  for (auto _ : state) {
    h.hash(x.data(), n, w.data(), 1);
    benchmark::DoNotOptimize(w.data());
  }
  state.counters["rows/s"] = benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["adds/s"] =
      benchmark::Counter(double(n) * m * s, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Hash)
    ->ArgNames({"d", "m", "s", "rho", "int", "density%"})
    ->Args({784, 108192, 82, 8, 1, 50})     // Fashion-MNIST, paper setting, uint8 pixels
    ->Args({784, 108192, 82, 8, 0, 50})     // the same values on the float path
    ->Args({64, 16384, 19, 32, 1, 100})     // Digits, paper setting
    ->Args({20, 4096, 6, 32, 0, 100})       // small tabular
    ->Args({500, 32000, 50, 64, 0, 100})    // wide tabular
    ->Args({1000, 64000, 100, 32, 0, 3})    // sparse rows (3% non-zero)
    ->Unit(benchmark::kMillisecond);

void BM_TopK(benchmark::State& state) {
  const auto m = static_cast<std::uint32_t>(state.range(0));
  const auto rho = static_cast<std::uint32_t>(state.range(1));
  SeededRng r(2);
  std::vector<float> act(m);
  for (auto& v : act) v = static_cast<float>(r.normal());
  kernels::TopK<float> topk;
  std::vector<std::uint32_t> w(rho);
  for (auto _ : state) {
    topk.reset(1, rho, m);
    float* thr = topk.thresholds();
    for (std::uint32_t i = 0; i < m; ++i)
      if (!(act[i] < thr[0])) topk.offer(0, act[i], i);
    topk.winners(0, w.data());
    benchmark::DoNotOptimize(w.data());
  }
  state.counters["units/s"] = benchmark::Counter(double(m), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TopK)->Args({108192, 8})->Args({16384, 32})->Args({100000, 256});

void BM_Score(benchmark::State& state) {
  const auto m = static_cast<std::uint32_t>(state.range(0));
  const auto L = static_cast<std::size_t>(state.range(1));
  const auto rho = static_cast<std::uint32_t>(state.range(2));
  ClassCounts counts(L, m);
  SeededRng r(3);
  for (auto& c : counts.values()) c = static_cast<std::uint32_t>(r.uniform_below(3));
  const auto table = filter_table(counts, 0.8);
  const std::size_t n = 10000;
  std::vector<std::uint32_t> w(n * rho);
  for (auto& v : w) v = static_cast<std::uint32_t>(r.uniform_below(m));
  std::vector<double> out(L);
  for (auto _ : state) {
    for (std::size_t i = 0; i < n; ++i) {
      score_winners(w.data() + i * rho, rho, table.data(), L, out.data());
      benchmark::DoNotOptimize(argmin_class(out.data(), L));
    }
  }
  state.counters["rows/s"] = benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Score)->Args({108192, 10, 8})->Args({16384, 10, 32})->Args({50000, 30, 256});

}  // namespace
}  // namespace flynn
