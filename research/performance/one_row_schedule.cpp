// How many steps the one-row shuffle kernel (src/core/one_row_shuffle_kernel.cpp, layout
// Shuffle16 in src/core/one_row_plan.hpp) takes per batch of 32 units, against what other
// schedules and window widths would take, on the Fashion-MNIST shapes. Its time per row is
// proportional to the steps (each step: one window load, the decode of 32 packed bytes,
// two byte shuffles, two multiply-adds, two adds), so this says what a scheduling or layout
// change could buy before it is written.
//
// Schedules compared, each on the same batches (the plan's own unit order unless said):
//   plan      the product's plan (build_one_row_plan): the sweep below, window 15 columns
//   sweep W   the window starts at the batch's smallest pending column and spans W columns;
//             every unit takes up to 2 of its pending columns in it (with signed lifting:
//             one positive and one negative)
//   groups G  the sweep per group of G units (G < 32: the group's units share a window; the
//             batch takes as many steps as its slowest group)
//   random    the sweep at W = 15 with units grouped at random (no ordering by columns)
//   max-fill  each step takes the window (any start) that fills the most slots
//
// Build (from the repository root, after `cmake --build build --target flynn_core`):
//   c++ -std=c++20 -O2 -DFMT_SHARED -Iinclude -Isrc -Ibuild/include \
//     research/performance/one_row_schedule.cpp -o build/one_row_schedule \
//     build/src/core/libflynn_core.a -lhwy -lz -lfmt -lpthread
// Run:
//   build/one_row_schedule [batches sampled, default 60]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/one_row_plan.hpp"
#include "flynn/lifting_matrix.hpp"

using namespace flynn;

namespace {

constexpr unsigned kUnits = kernels::OneRowPlan::kBatchUnits;
constexpr unsigned kColumns = 784;  // Fashion-MNIST's pixels

// A group's pending columns: list 2·l (+1 for negative entries under signed lifting) of unit l.
using Pending = std::vector<std::vector<int>>;

Pending pending_of(const LiftingMatrix& M, const std::vector<unsigned>& units, bool signed_lifting) {
  Pending p(2 * units.size());
  for (std::size_t l = 0; l < units.size(); ++l) {
    if (units[l] == kernels::OneRowPlan::kNoUnit) continue;
    const std::uint32_t* c = M.row(units[l]);
    for (unsigned k = 0; k < M.ones_per_row(); ++k) {
      const bool negative = c[k] >= kColumns;
      p[2 * l + (signed_lifting && negative ? 1 : 0)].push_back(static_cast<int>(negative ? c[k] - kColumns : c[k]));
    }
  }
  for (auto& v : p) std::sort(v.begin(), v.end());
  return p;
}

// Takes up to `per_list` of each list's pending columns in [x, x + W); returns how many.
int take(Pending& p, int x, int W, int per_list) {
  int taken = 0;
  for (auto& v : p) {
    const auto lo = std::lower_bound(v.begin(), v.end(), x);
    auto hi = lo;
    while (hi != v.end() && *hi < x + W && hi - lo < per_list) ++hi;
    taken += static_cast<int>(hi - lo);
    v.erase(lo, hi);
  }
  return taken;
}

int sweep_steps(Pending p, int W, int per_list) {
  for (int steps = 0;; ++steps) {
    int lowest = -1;
    for (const auto& v : p)
      if (!v.empty() && (lowest < 0 || v[0] < lowest)) lowest = v[0];
    if (lowest < 0) return steps;
    take(p, lowest, W, per_list);
  }
}

int max_fill_steps(Pending p, int W, int per_list) {
  for (int steps = 0;; ++steps) {
    int best = 0, best_x = 0;
    for (int x = 0; x < static_cast<int>(kColumns); ++x) {
      int fill = 0;
      for (const auto& v : p) {
        const auto lo = std::lower_bound(v.begin(), v.end(), x);
        const auto hi = std::lower_bound(lo, v.end(), x + W);
        fill += std::min<int>(per_list, static_cast<int>(hi - lo));
      }
      if (fill > best) best = fill, best_x = x;
    }
    if (best == 0) return steps;
    take(p, best_x, W, per_list);
  }
}

void shape(const char* name, unsigned m, unsigned s, bool signed_lifting, unsigned sampled) {
  const LiftingMatrix M(m, s, signed_lifting ? 2 * kColumns : kColumns, 5489, 2, signed_lifting);
  const auto plan = kernels::build_one_row_plan(M, signed_lifting, kernels::OneRowLayout::Shuffle16);
  const std::size_t batches = plan->batch_steps.size() - 1;
  const int per_list = signed_lifting ? 1 : 2;
  std::vector<unsigned> shuffled(m);
  for (unsigned i = 0; i < m; ++i) shuffled[i] = i;
  std::mt19937 rng(1);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);

  const std::vector<int> widths = {15, 31, 47, 63};
  const std::vector<unsigned> groups = {16, 8, 4};
  double planned = 0, random = 0, max_fill = 0;
  std::vector<double> sweep(widths.size(), 0), grouped(groups.size(), 0);
  unsigned n = 0;
  for (std::size_t b = 0; b < batches; b += std::max<std::size_t>(1, batches / sampled), ++n) {
    planned += plan->batch_steps[b + 1] - plan->batch_steps[b];
    const std::vector<unsigned> units(plan->units.begin() + b * kUnits, plan->units.begin() + (b + 1) * kUnits);
    const Pending p = pending_of(M, units, signed_lifting);
    for (std::size_t i = 0; i < widths.size(); ++i) sweep[i] += sweep_steps(p, widths[i], per_list);
    for (std::size_t i = 0; i < groups.size(); ++i) {
      int slowest = 0;
      for (unsigned g = 0; g < kUnits; g += groups[i])
        slowest = std::max(slowest, sweep_steps(pending_of(M, {units.begin() + g, units.begin() + g + groups[i]},
                                                           signed_lifting),
                                                15, per_list));
      grouped[i] += slowest;
    }
    const std::vector<unsigned> any(shuffled.begin() + (n * kUnits) % (m - kUnits),
                                    shuffled.begin() + (n * kUnits) % (m - kUnits) + kUnits);
    random += sweep_steps(pending_of(M, any, signed_lifting), 15, per_list);
    max_fill += max_fill_steps(p, 15, per_list);
  }
  const double entries = double(kUnits) * s;  // slots a batch needs at 100 % fill: entries / 64
  std::printf("%s (m = %u, s = %u%s), %u of %zu batches; steps per batch (fill of the 64 slots a step):\n", name, m, s,
              signed_lifting ? ", signed lifting" : "", n, batches);
  auto line = [&](const char* what, double total) {
    std::printf("  %-22s %6.1f  (%.0f %%)\n", what, total / n, 100.0 * entries / (total / n * 2 * kUnits));
  };
  line("plan", planned);
  for (std::size_t i = 0; i < widths.size(); ++i) {
    char label[32];
    std::snprintf(label, sizeof label, "sweep W = %d", widths[i]);
    line(label, sweep[i]);
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    char label[32];
    std::snprintf(label, sizeof label, "groups of %u, W = 15", groups[i]);
    line(label, grouped[i]);
  }
  line("random units, W = 15", random);
  line("max-fill, W = 15", max_fill);
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned sampled = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 60;
  shape("paper setting", 108192, 82, false, sampled);
  shape("defaults", 131072, 64, true, sampled);
  return 0;
}
