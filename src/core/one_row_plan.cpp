#include "core/one_row_plan.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace flynn::kernels {

namespace {

using Plan = OneRowPlan;

// The slot that orders units at split depth `depth`: s/2, then s/4 and 3s/4, then the
// eighths, …: the points that pin a sorted column list down fastest, as in a Brownian
// bridge's midpoint construction.
std::uint32_t split_slot(std::uint32_t depth, std::uint32_t s) {
  std::uint32_t level = 0;
  while ((2u << level) - 1 <= depth) ++level;
  const std::uint64_t index = depth - ((1u << level) - 1);
  return static_cast<std::uint32_t>(((2 * index + 1) * s) >> (level + 1));
}

// Orders the units so that each run of kBatchUnits holds units with alike column lists:
// ranges are halved (at a multiple of kBatchUnits) by the median of the column at slot
// split_slot(depth), depth by depth, until every range is one batch. The keys of all depths
// are gathered first, unit by unit (the entries are tens of MB; a gather per depth from
// them was most of the build).
std::vector<std::uint32_t> unit_order(const std::vector<std::uint16_t>& entries, std::uint32_t m,
                                      std::uint32_t s) {
  constexpr std::size_t U = Plan::kBatchUnits;
  std::uint32_t depths = 1;
  while ((std::size_t(U) << (depths - 1)) < m) ++depths;  // halvings until a batch, + 1
  std::vector<std::uint16_t> keys(std::size_t(m) * depths);
  for (std::uint32_t u = 0; u < m; ++u)
    for (std::uint32_t d = 0; d < depths; ++d)
      keys[std::size_t(u) * depths + d] = entries[std::size_t(u) * s + split_slot(d, s)];
  std::vector<std::uint32_t> order(m);
  std::iota(order.begin(), order.end(), 0u);
  std::vector<std::pair<std::size_t, std::size_t>> ranges = {{0, m}}, next;
  std::vector<std::uint64_t> keyed;
  for (std::uint32_t depth = 0; !ranges.empty(); ++depth) {
    const std::uint32_t d = std::min(depth, depths - 1);
    next.clear();
    for (const auto& [b, e] : ranges) {
      const std::size_t n = e - b;
      if (n <= U) continue;
      keyed.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t u = order[b + i];
        keyed[i] = (std::uint64_t(keys[std::size_t(u) * depths + d]) << 32) | u;
      }
      const std::size_t half = std::max(U, n / U / 2 * U);
      std::nth_element(keyed.begin(), keyed.begin() + static_cast<std::ptrdiff_t>(half),
                       keyed.end());
      for (std::size_t i = 0; i < n; ++i) order[b + i] = static_cast<std::uint32_t>(keyed[i]);
      next.emplace_back(b, b + half);
      next.emplace_back(b + half, e);
    }
    ranges.swap(next);
  }
  return order;
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<std::uint64_t>::max() : out;
}
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

// The greedy schedule as it is built, batch after batch, in plain vectors (OneRowPlan's
// fields of the same names).
struct Schedule {
  std::vector<std::uint32_t> batch_steps, units;
  std::vector<std::uint16_t> windows;
  std::vector<std::uint8_t> slots;
};

// Moves the schedule into the plan with the batches ordered by their number of steps
// (stably): a kernel's loop over a batch's steps then ends after the same count batch after
// batch, which the branch predictor learns, instead of mispredicting the end of almost
// every batch (their counts vary by a few steps around s/kSlots). Batches are independent,
// so their order changes no sum.
void sort_batches_by_steps(const Schedule& raw, OneRowPlan& p) {
  const std::size_t batches = raw.batch_steps.size() - 1;
  std::vector<std::uint32_t> order(batches);
  std::iota(order.begin(), order.end(), 0u);
  auto steps = [&](std::uint32_t b) { return raw.batch_steps[b + 1] - raw.batch_steps[b]; };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return steps(a) < steps(b); });
  p.batch_steps.reserve(raw.batch_steps.size());
  p.units.reserve(raw.units.size());
  p.windows.reserve(raw.windows.size());
  p.slots.reserve(raw.slots.size());
  for (std::uint32_t b : order) {
    p.batch_steps.push_back(static_cast<std::uint32_t>(p.windows.size()));
    const auto u = raw.units.begin() + std::ptrdiff_t(b) * Plan::kBatchUnits;
    p.units.insert(p.units.end(), u, u + Plan::kBatchUnits);
    const auto w = raw.windows.begin() + raw.batch_steps[b];
    p.windows.insert(p.windows.end(), w, w + steps(b));
    const auto sl = raw.slots.begin() + std::ptrdiff_t(raw.batch_steps[b]) * Plan::kStepBytes;
    p.slots.insert(p.slots.end(), sl, sl + std::ptrdiff_t(steps(b)) * Plan::kStepBytes);
  }
  p.batch_steps.push_back(static_cast<std::uint32_t>(p.windows.size()));
}

}  // namespace

void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  ::madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void OneRowPlan::shift_row(std::uint8_t* buf) const {
  const std::size_t half = shifted_offset();
  std::memcpy(buf + half, buf + kBlockBytes, half - kBlockBytes);
  std::memset(buf + 2 * half - kBlockBytes, 0, kBlockBytes);
}

std::size_t OneRowPlan::bytes() const {
  return batch_steps.size() * sizeof(std::uint32_t) + windows.size() * sizeof(std::uint16_t) +
         slots.size() + units.size() * sizeof(std::uint32_t);
}

std::uint64_t plan_steps_bound(std::uint64_t s, std::uint64_t w) {
  return saturating_add(2 * ((s + Plan::kSlots - 1) / Plan::kSlots),
                        (w + Plan::kBlockColumns - 1) / Plan::kBlockColumns + 2);
}

std::uint64_t plan_bytes_bound(std::uint64_t m, std::uint64_t s, std::uint64_t w) {
  const std::uint64_t batches = m / Plan::kBatchUnits + 1;
  const std::uint64_t per_batch = saturating_add(
      Plan::kBatchUnits * 4 + 4, saturating_mul(plan_steps_bound(s, w), Plan::kStepBytes + 2));
  // + the slots' rounding up to whole huge pages (CacheLineAllocator)
  return saturating_add(saturating_mul(batches, per_batch), std::uint64_t{2} << 20);
}

std::unique_ptr<OneRowPlan> build_one_row_plan(const LiftingMatrix& M, bool signed_lifting) {
  const std::uint32_t m = M.rows(), s = M.ones_per_row();
  const std::uint32_t w = signed_lifting ? M.columns() / 2 : M.columns();
  if (m == 0 || s == 0 || w > Plan::kMaxColumns) return nullptr;
  auto plan = std::make_unique<Plan>();
  plan->m = m;
  plan->columns = w;
  plan->signed_lifting = signed_lifting;
  // Blocks the columns need, plus zero blocks so that the last one can start a window.
  plan->blocks = (w + Plan::kBlockColumns - 1) / Plan::kBlockColumns + Plan::kWindowBlocks - 1;

  // Each unit's entries, column << 1 | negative (16 bits: w ≤ kMaxColumns), ascending by
  // column (a signed row's columns are distinct among the first w, so folding keeps them
  // distinct).
  std::vector<std::uint16_t> entries(std::size_t(m) * s);
  for (std::uint32_t u = 0; u < m; ++u) {
    std::uint16_t* e = entries.data() + std::size_t(u) * s;
    const std::uint32_t* c = M.row(u);
    for (std::uint32_t k = 0; k < s; ++k)
      e[k] = static_cast<std::uint16_t>(c[k] >= w ? ((c[k] - w) << 1) | 1u : c[k] << 1);
    if (signed_lifting) std::sort(e, e + s);
  }
  const std::vector<std::uint32_t> order = unit_order(entries, m, s);

  constexpr std::uint32_t U = Plan::kBatchUnits;
  const std::uint64_t steps_bound = plan_steps_bound(s, w);
  const std::size_t batches = (std::size_t(m) + U - 1) / U;
  Schedule raw;
  raw.batch_steps.reserve(batches + 1);
  raw.units.reserve(batches * U);
  const std::size_t expected_steps = batches * ((s + Plan::kSlots - 1) / Plan::kSlots) * 5 / 4;
  raw.windows.reserve(expected_steps);
  raw.slots.reserve(expected_steps * Plan::kStepBytes);
  std::uint32_t next[U];
  const std::uint16_t* list[U];
  for (std::size_t b = 0; b < batches; ++b) {
    raw.batch_steps.push_back(static_cast<std::uint32_t>(raw.windows.size()));
    for (std::uint32_t l = 0; l < U; ++l) {
      const std::size_t i = b * U + l;
      const bool real = i < m;
      raw.units.push_back(real ? order[i] : Plan::kNoUnit);
      list[l] = real ? entries.data() + std::size_t(order[i]) * s : nullptr;
      next[l] = real ? 0 : s;  // a padding lane has nothing pending
    }
    for (std::uint64_t step = 0;; ++step) {
      std::uint32_t lowest = std::numeric_limits<std::uint32_t>::max();
      for (std::uint32_t l = 0; l < U; ++l)
        if (next[l] < s) lowest = std::min<std::uint32_t>(lowest, list[l][next[l]] >> 1);
      if (lowest == std::numeric_limits<std::uint32_t>::max()) break;
      if (step == steps_bound) return nullptr;
      const std::uint32_t window = lowest / Plan::kBlockColumns;  // its first block
      const std::uint32_t end = (window + Plan::kWindowBlocks) * Plan::kBlockColumns;
      // Its first byte, in the copy where that is 64-byte aligned.
      const std::size_t at_byte = std::size_t(window) * Plan::kBlockBytes;
      const std::size_t offset =
          at_byte % 64 == 0 ? at_byte : plan->shifted_offset() + at_byte - Plan::kBlockBytes;
      raw.windows.push_back(static_cast<std::uint16_t>(offset));
      const std::size_t at = raw.slots.size();
      raw.slots.resize(at + Plan::kStepBytes, Plan::kPad);
      std::uint8_t* out = raw.slots.data() + at;
      for (std::uint32_t l = 0; l < U; ++l) {
        std::uint8_t* slot = out + l * Plan::kSlots;  // [group][lane][slot] = [l][slot]
        for (std::uint32_t k = 0; k < Plan::kSlots && next[l] < s; ++k) {
          const std::uint32_t e = list[l][next[l]], c = e >> 1;
          if (c >= end) break;
          const std::size_t byte = Plan::position(c) - at_byte;
          slot[k] = static_cast<std::uint8_t>(byte | ((e & 1u) ? Plan::kNegative : 0u));
          ++next[l];
        }
      }
    }
  }
  raw.batch_steps.push_back(static_cast<std::uint32_t>(raw.windows.size()));
  sort_batches_by_steps(raw, *plan);
  return plan;
}

}  // namespace flynn::kernels
