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
//   max-fill K  the same over K copies of the row in different random column orders (a
//             row buffer may hold the row several times; 1 + K−1 shuffled copies)
//   4 slots   each unit takes two 16-bit lanes (4 slots a step), so a step serves 16 units
//   halves    a step's 32-byte window is two 15-column halves, one per 128-bit lane; each
//             unit takes a lane in both (2 slots in each half), 16 units a step
//   sign weights (signed lifting) the multiply-add's weights chosen per group of G units
//             and step among (+1, −1), (+1, +1) and (−1, −1), whichever fills the most
// Steps of the schedules that serve 16 units a step are counted per 32 units (two groups
// of 16 one after the other), so that every row compares the same work.
//
// Build (from the repository root, after `cmake --build build --target flynn_core`; one
// command):
//   c++ -std=c++20 -O2 -DFMT_SHARED -Iinclude -Isrc -Ibuild/include
//     research/performance/one_row_schedule.cpp -o build/one_row_schedule
//     build/src/core/libflynn_core.a -lhwy -lz -lfmt -lpthread
// Run:
//   build/one_row_schedule [batches sampled, default 60] [batches for max-fill K, default 6]
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

// The smallest pending column of any list, −1 when none is left.
int lowest_pending(const Pending& p) {
  int lowest = -1;
  for (const auto& v : p)
    if (!v.empty() && (lowest < 0 || v[0] < lowest)) lowest = v[0];
  return lowest;
}

int sweep_steps(Pending p, int W, int per_list) {
  for (int steps = 0;; ++steps) {
    const int lowest = lowest_pending(p);
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

// The sweep with a 2H-column window read as two halves [x, x + H) and [x + H, x + 2H),
// each list taking up to per_half of its pending columns in each.
int halves_steps(Pending p, int H, int per_half) {
  for (int steps = 0;; ++steps) {
    const int lowest = lowest_pending(p);
    if (lowest < 0) return steps;
    take(p, lowest + H, H, per_half);  // the upper half first: take() erases what it takes
    take(p, lowest, H, per_half);
  }
}

// Signed lifting (lists 2·l positive, 2·l + 1 negative): the sweep at W = 15 where each
// group of G units takes, per step, the weights that fill the most: one positive and one
// negative column (+1, −1), two positive (+1, +1) or two negative (−1, −1).
int sign_weights_steps(Pending p, unsigned G) {
  const int W = 15;
  auto count = [&](const std::vector<int>& v, int x, int k) {
    int t = 0;
    while (t < static_cast<int>(v.size()) && v[t] < x + W && t < k) ++t;
    return t;
  };
  for (int steps = 0;; ++steps) {
    const int lowest = lowest_pending(p);
    if (lowest < 0) return steps;
    for (std::size_t g = 0; g < p.size(); g += 2 * G) {
      const std::size_t e = std::min(p.size(), g + 2 * G);
      int best = -1, best_t = 0;
      for (int t = 0; t < 3; ++t) {
        int fill = 0;
        for (std::size_t l = g; l < e; l += 2)
          fill += t == 0 ? count(p[l], lowest, 1) + count(p[l + 1], lowest, 1)
                         : count(p[l + (t == 2)], lowest, 2);
        if (fill > best) best = fill, best_t = t;
      }
      for (std::size_t l = g; l < e; l += 2) {
        const int pos = best_t == 0 ? count(p[l], lowest, 1) : best_t == 1 ? count(p[l], lowest, 2) : 0;
        const int neg = best_t == 0 ? count(p[l + 1], lowest, 1) : best_t == 2 ? count(p[l + 1], lowest, 2) : 0;
        p[l].erase(p[l].begin(), p[l].begin() + pos);
        p[l + 1].erase(p[l + 1].begin(), p[l + 1].begin() + neg);
      }
    }
  }
}

// max-fill over K copies of the row: copy 0 in column order, the others shuffled
// (order[k][c] = the position of column c in copy k).
int max_fill_copies_steps(Pending p, const std::vector<std::vector<int>>& order, int W, int per_list) {
  const int K = static_cast<int>(order.size());
  std::vector<int> fill(kColumns);
  std::vector<int> at;
  for (int steps = 0;; ++steps) {
    int best = 0, best_k = 0, best_x = 0;
    for (int k = 0; k < K; ++k) {
      std::fill(fill.begin(), fill.end(), 0);
      for (const auto& v : p) {
        at.clear();
        for (int c : v) at.push_back(order[k][c]);
        std::sort(at.begin(), at.end());
        std::size_t lo = 0, hi = 0;
        for (int x = 0; x < static_cast<int>(kColumns); ++x) {
          while (lo < at.size() && at[lo] < x) ++lo;
          hi = std::max(hi, lo);
          while (hi < at.size() && at[hi] < x + W) ++hi;
          fill[x] += std::min<int>(per_list, static_cast<int>(hi - lo));
        }
      }
      for (int x = 0; x < static_cast<int>(kColumns); ++x)
        if (fill[x] > best) best = fill[x], best_k = k, best_x = x;
    }
    if (best == 0) return steps;
    for (auto& v : p) {  // each list takes its per_list columns that come first in the window
      std::sort(v.begin(), v.end(), [&](int a, int b) { return order[best_k][a] < order[best_k][b]; });
      int taken = 0;
      std::vector<int> kept;
      for (int c : v) {
        const int x = order[best_k][c];
        if (x >= best_x && x < best_x + W && taken < per_list) ++taken;
        else kept.push_back(c);
      }
      std::sort(kept.begin(), kept.end());
      v = kept;
    }
  }
}

void shape(const char* name, unsigned m, unsigned s, bool signed_lifting, unsigned sampled,
           unsigned sampled_copies) {
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
  double planned = 0, random = 0, max_fill = 0, four_slots = 0, halves = 0;
  std::vector<double> sweep(widths.size(), 0), grouped(groups.size(), 0);
  const std::vector<unsigned> weight_groups = {32, 16, 8};
  std::vector<double> weights(weight_groups.size(), 0);
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
    for (unsigned g = 0; g < kUnits; g += 16) {  // the schedules of 16 units a step
      const Pending half = pending_of(M, {units.begin() + g, units.begin() + g + 16}, signed_lifting);
      four_slots += sweep_steps(half, 15, 2 * per_list);
      halves += halves_steps(half, 15, per_list);
    }
    if (signed_lifting)
      for (std::size_t i = 0; i < weight_groups.size(); ++i) weights[i] += sign_weights_steps(p, weight_groups[i]);
  }
  // max-fill over copies is slow (every window of every copy, every step): fewer batches.
  const std::vector<int> copies = {1, 4, 16};
  std::vector<double> copied(copies.size(), 0);
  unsigned n_copies = 0;
  std::mt19937 order_rng(7);
  std::vector<std::vector<int>> order(copies.back(), std::vector<int>(kColumns));
  for (std::size_t k = 0; k < order.size(); ++k) {
    std::vector<int> columns(kColumns);
    for (unsigned c = 0; c < kColumns; ++c) columns[c] = static_cast<int>(c);
    if (k) std::shuffle(columns.begin(), columns.end(), order_rng);
    for (unsigned x = 0; x < kColumns; ++x) order[k][columns[x]] = static_cast<int>(x);
  }
  for (std::size_t b = 0; b < batches && n_copies < sampled_copies;
       b += std::max<std::size_t>(1, batches / sampled_copies), ++n_copies) {
    const std::vector<unsigned> units(plan->units.begin() + b * kUnits, plan->units.begin() + (b + 1) * kUnits);
    const Pending p = pending_of(M, units, signed_lifting);
    for (std::size_t i = 0; i < copies.size(); ++i)
      copied[i] += max_fill_copies_steps(p, {order.begin(), order.begin() + copies[i]}, 15, per_list);
  }
  const double entries = double(kUnits) * s;  // slots a batch needs at 100 % fill: entries / 64
  std::printf("%s (m = %u, s = %u%s), %u of %zu batches; steps per batch (fill of the 64 slots a step):\n", name, m, s,
              signed_lifting ? ", signed lifting" : "", n, batches);
  auto line = [&](const char* what, double total) {
    std::printf("  %-28s %6.1f  (%.0f %%)\n", what, total / n, 100.0 * entries / (total / n * 2 * kUnits));
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
  for (std::size_t i = 0; i < copies.size(); ++i) {
    char label[40];
    std::snprintf(label, sizeof label, "max-fill, %d cop%s (%u)", copies[i], copies[i] == 1 ? "y" : "ies", n_copies);
    line(label, copied[i] * n / n_copies);  // line() divides by n
  }
  line("4 slots a unit, 16 units", four_slots);
  line("halves 15 + 15, 16 units", halves);
  if (signed_lifting)
    for (std::size_t i = 0; i < weight_groups.size(); ++i) {
      char label[40];
      std::snprintf(label, sizeof label, "sign weights per %u units", weight_groups[i]);
      line(label, weights[i]);
    }
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned sampled = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 60;
  const unsigned sampled_copies = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 6;
  shape("paper setting", 108192, 82, false, sampled, sampled_copies);
  // The defaults on Fashion-MNIST (zsign-q+paper) are two hashes of 65536 units side by
  // side: the standardised row with signed lifting, and the raw row the paper's way.
  shape("defaults, signed half", 65536, 64, true, sampled, sampled_copies);
  shape("defaults, paper half", 65536, 64, false, sampled, sampled_copies);
  return 0;
}
