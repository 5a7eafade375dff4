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
// every batch (their counts vary by a few steps around s/slots). Batches are independent,
// so their order changes no sum.
void sort_batches_by_steps(const Schedule& raw, OneRowPlan& p) {
  const std::size_t batches = raw.batch_steps.size() - 1;
  const std::ptrdiff_t step_bytes = p.step_bytes();
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
    const auto sl = raw.slots.begin() + std::ptrdiff_t(raw.batch_steps[b]) * step_bytes;
    p.slots.insert(p.slots.end(), sl, sl + std::ptrdiff_t(steps(b)) * step_bytes);
  }
  p.batch_steps.push_back(static_cast<std::uint32_t>(p.windows.size()));
}

// Where a step's window lies: the columns below `end` that it holds (from the window's
// first column on), its offset in the row buffer (what the kernel loads), the byte its
// positions count from and the position a pad takes.
struct Window {
  std::uint32_t end = 0;
  std::uint16_t offset = 0;
  std::size_t base = 0;
  std::uint8_t pad = 0;
};

// The window a step of `p` takes when `lowest` is the batch's smallest pending column.
Window window_at(const OneRowPlan& p, std::uint32_t lowest) {
  Window w;
  if (p.layout == OneRowLayout::Shuffle16) {
    // 16 bytes from the column's: 15 columns and the zero of the block they cross into.
    w.end = lowest + Shuffle16::kBlockColumns;
    w.base = p.position(lowest);
    w.offset = static_cast<std::uint16_t>(w.base);
    w.pad = static_cast<std::uint8_t>(Shuffle16::kBlockColumns - w.base % Shuffle16::kBlockBytes);
    return w;
  }
  const std::uint32_t block = lowest / Permute128::kBlockColumns;  // the window's first block
  w.end = (block + Permute128::kWindowBlocks) * Permute128::kBlockColumns;
  w.base = std::size_t(block) * Permute128::kBlockBytes;
  // Its first byte, in the copy where that is 64-byte aligned.
  w.offset = static_cast<std::uint16_t>(
      w.base % 64 == 0 ? w.base : p.shifted_offset() + w.base - Permute128::kBlockBytes);
  w.pad = Permute128::kPad;
  return w;
}

// The slot byte of entry `e` (column << 1 | negative) in window `w` (Shuffle16: 4 bits;
// its sign is the slot's, not the byte's).
std::uint8_t slot_byte(const OneRowPlan& p, const Window& w, std::uint32_t e) {
  const std::size_t at = p.position(e >> 1) - w.base;
  if (p.layout == OneRowLayout::Shuffle16) return static_cast<std::uint8_t>(at);
  return static_cast<std::uint8_t>(at | ((e & 1u) ? Permute128::kNegative : 0u));
}

// A batch's units, each as up to two ascending lists of entries (column << 1 | negative)
// with how many of each are scheduled: the unit's entries in list 0, or (Shuffle16 with
// signed lifting, one slot per sign) its positive ones in list 0 and negative ones in 1.
struct BatchUnits {
  std::vector<std::uint16_t> lists[2][Plan::kBatchUnits];
  std::uint32_t next[2][Plan::kBatchUnits] = {};
  bool by_sign = false;

  bool pending(std::uint32_t k, std::uint32_t l) const { return next[k][l] < lists[k][l].size(); }
  std::uint32_t front(std::uint32_t k, std::uint32_t l) const { return lists[k][l][next[k][l]]; }
};

// The slots of unit l in a step in window `w`: up to `slots` of its next pending entries
// inside the window (or, by sign, slot k from list k), the others pads.
void fill_slots(const OneRowPlan& p, const Window& w, BatchUnits& b, std::uint32_t l,
                std::uint32_t slots, std::uint8_t* out) {
  for (std::uint32_t k = 0; k < slots; ++k) {
    const std::uint32_t list = b.by_sign ? k : 0;
    if (!b.pending(list, l) || (b.front(list, l) >> 1) >= w.end) {
      if (!b.by_sign) break;  // the remaining slots stay pads
      continue;
    }
    out[k] = slot_byte(p, w, b.front(list, l));
    ++b.next[list][l];
  }
}

// Packs a step's 64 Shuffle16 slot bytes into 32 (see one_row_plan.hpp).
void pack_nibbles(const std::uint8_t* slots, std::uint8_t* out) {
  constexpr std::uint32_t half = Shuffle16::kStepBytes;
  for (std::uint32_t j = 0; j < half; ++j)
    out[j] = static_cast<std::uint8_t>(slots[j] | (slots[half + j] << 4));
}

// Schedules one batch greedily (see one_row_plan.hpp) into `raw`; false when it would
// take more than `steps_bound` steps.
bool schedule_batch(const OneRowPlan& p, BatchUnits& b, std::uint64_t steps_bound,
                    Schedule& raw) {
  constexpr std::uint32_t U = Plan::kBatchUnits;
  const std::uint32_t slots = p.slots_per_unit();
  std::uint8_t step[U * Permute128::kSlots];
  for (std::uint64_t n = 0;; ++n) {
    std::uint32_t lowest = std::numeric_limits<std::uint32_t>::max();
    for (std::uint32_t k = 0; k < 2; ++k)
      for (std::uint32_t l = 0; l < U; ++l)
        if (b.pending(k, l)) lowest = std::min<std::uint32_t>(lowest, b.front(k, l) >> 1);
    if (lowest == std::numeric_limits<std::uint32_t>::max()) return true;
    if (n == steps_bound) return false;
    const Window w = window_at(p, lowest);
    raw.windows.push_back(w.offset);
    std::fill(step, step + U * slots, w.pad);
    // [unit][slot] (Permute128: [group][lane][slot], the same bytes)
    for (std::uint32_t l = 0; l < U; ++l) fill_slots(p, w, b, l, slots, step + l * slots);
    const std::size_t at = raw.slots.size();
    raw.slots.resize(at + p.step_bytes());
    if (p.layout == OneRowLayout::Shuffle16) {
      pack_nibbles(step, raw.slots.data() + at);
    } else {
      std::copy(step, step + U * slots, raw.slots.begin() + std::ptrdiff_t(at));
    }
  }
}

// Each unit's entries, column << 1 | negative (16 bits: w ≤ kMaxColumns), ascending by
// column (a signed row's columns are distinct among the first w, so folding keeps them
// distinct).
std::vector<std::uint16_t> folded_entries(const LiftingMatrix& M, std::uint32_t w,
                                          bool signed_lifting) {
  const std::uint32_t m = M.rows(), s = M.ones_per_row();
  std::vector<std::uint16_t> entries(std::size_t(m) * s);
  for (std::uint32_t u = 0; u < m; ++u) {
    std::uint16_t* e = entries.data() + std::size_t(u) * s;
    const std::uint32_t* c = M.row(u);
    for (std::uint32_t k = 0; k < s; ++k)
      e[k] = static_cast<std::uint16_t>(c[k] >= w ? ((c[k] - w) << 1) | 1u : c[k] << 1);
    if (signed_lifting) std::sort(e, e + s);
  }
  return entries;
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

std::size_t OneRowPlan::row_bytes() const {
  if (layout == OneRowLayout::Permute128) return 2 * shifted_offset();
  // A window may start at the last column's byte: one more block, zeros past the row.
  const std::size_t blocks16 = (std::size_t(columns) + Shuffle16::kBlockColumns - 1) /
                                   Shuffle16::kBlockColumns + 1;
  return (blocks16 * Shuffle16::kBlockBytes + 63) / 64 * 64;
}

void OneRowPlan::lay_out_row(const std::uint8_t* bytes, std::uint8_t* buf) const {
  if (layout == OneRowLayout::Shuffle16) {
    constexpr std::uint32_t bc = Shuffle16::kBlockColumns;
    const std::uint8_t bias = signed_lifting ? Shuffle16::kSignedBias : 0;
    std::memset(buf, bias, row_bytes());
    for (std::uint32_t c0 = 0; c0 < columns; c0 += bc) {
      std::uint8_t* block = buf + std::size_t(c0 / bc) * Shuffle16::kBlockBytes;
      const std::uint32_t n = std::min(bc, columns - c0);
      for (std::uint32_t k = 0; k < n; ++k) block[k] = static_cast<std::uint8_t>(bytes[c0 + k] + bias);
    }
    return;
  }
  constexpr std::uint32_t bc = Permute128::kBlockColumns;
  const std::size_t half = shifted_offset();
  std::memset(buf, 0, half);
  for (std::uint32_t c0 = 0; c0 < columns; c0 += bc)
    std::memcpy(buf + std::size_t(c0 / bc) * Permute128::kBlockBytes, bytes + c0,
                std::min(bc, columns - c0));
  // The shifted copy: buf[half + i] = buf[kBlockBytes + i].
  std::memcpy(buf + half, buf + Permute128::kBlockBytes, half - Permute128::kBlockBytes);
  std::memset(buf + 2 * half - Permute128::kBlockBytes, 0, Permute128::kBlockBytes);
}

std::size_t OneRowPlan::bytes() const {
  return batch_steps.size() * sizeof(std::uint32_t) + windows.size() * sizeof(std::uint16_t) +
         slots.size() + units.size() * sizeof(std::uint32_t);
}

std::uint64_t plan_steps_bound(OneRowLayout layout, std::uint64_t s, std::uint64_t w) {
  if (layout == OneRowLayout::Shuffle16)
    return saturating_add(2 * s, (w + Shuffle16::kBlockColumns - 1) / Shuffle16::kBlockColumns + 2);
  return saturating_add(2 * ((s + Permute128::kSlots - 1) / Permute128::kSlots),
                        (w + Permute128::kBlockColumns - 1) / Permute128::kBlockColumns + 2);
}

std::uint64_t plan_bytes_bound(std::uint64_t m, std::uint64_t s, std::uint64_t w) {
  const std::uint64_t batches = m / Plan::kBatchUnits + 1;
  std::uint64_t per_batch = 0;
  for (OneRowLayout layout : {OneRowLayout::Permute128, OneRowLayout::Shuffle16}) {
    Plan shape;
    shape.layout = layout;
    per_batch = std::max(per_batch, saturating_add(Plan::kBatchUnits * 4 + 4,
                                                   saturating_mul(plan_steps_bound(layout, s, w),
                                                                  shape.step_bytes() + 2)));
  }
  // + the slots' rounding up to whole huge pages (CacheLineAllocator)
  return saturating_add(saturating_mul(batches, per_batch), std::uint64_t{2} << 20);
}

std::unique_ptr<OneRowPlan> build_one_row_plan(const LiftingMatrix& M, bool signed_lifting,
                                               OneRowLayout layout) {
  const std::uint32_t m = M.rows(), s = M.ones_per_row();
  const std::uint32_t w = signed_lifting ? M.columns() / 2 : M.columns();
  if (m == 0 || s == 0 || w > Plan::kMaxColumns) return nullptr;
  auto plan = std::make_unique<Plan>();
  plan->layout = layout;
  plan->m = m;
  plan->s = s;
  plan->columns = w;
  plan->signed_lifting = signed_lifting;
  // Blocks the columns need, plus zero blocks so that the last one can start a window.
  plan->blocks = (w + Permute128::kBlockColumns - 1) / Permute128::kBlockColumns +
                 Permute128::kWindowBlocks - 1;
  const std::vector<std::uint16_t> entries = folded_entries(M, w, signed_lifting);
  const std::vector<std::uint32_t> order = unit_order(entries, m, s);

  constexpr std::uint32_t U = Plan::kBatchUnits;
  const std::uint64_t steps_bound = plan_steps_bound(layout, s, w);
  const std::size_t batches = (std::size_t(m) + U - 1) / U;
  Schedule raw;
  raw.batch_steps.reserve(batches + 1);
  raw.units.reserve(batches * U);
  // About s/4 steps per batch for Permute128, about s for Shuffle16 (2 slots per column).
  const std::size_t expected_steps =
      batches * (layout == OneRowLayout::Shuffle16 ? s : (s + 3) / 4) * 5 / 4;
  raw.windows.reserve(expected_steps);
  raw.slots.reserve(expected_steps * plan->step_bytes());
  BatchUnits b;
  b.by_sign = layout == OneRowLayout::Shuffle16 && signed_lifting;
  for (std::size_t batch = 0; batch < batches; ++batch) {
    raw.batch_steps.push_back(static_cast<std::uint32_t>(raw.windows.size()));
    for (std::uint32_t l = 0; l < U; ++l) {
      const std::size_t i = batch * U + l;
      const bool real = i < m;
      raw.units.push_back(real ? order[i] : Plan::kNoUnit);
      for (std::uint32_t k = 0; k < 2; ++k) {
        b.lists[k][l].clear();
        b.next[k][l] = 0;
      }
      if (!real) continue;  // a padding lane has nothing pending
      const std::uint16_t* e = entries.data() + std::size_t(order[i]) * s;
      for (std::uint32_t k = 0; k < s; ++k) b.lists[b.by_sign ? (e[k] & 1u) : 0][l].push_back(e[k]);
    }
    if (!schedule_batch(*plan, b, steps_bound, raw)) return nullptr;
  }
  raw.batch_steps.push_back(static_cast<std::uint32_t>(raw.windows.size()));
  sort_batches_by_steps(raw, *plan);
  return plan;
}

}  // namespace flynn::kernels
