#include "flynn/model_footprint.hpp"

#include <algorithm>
#include <bit>
#include <array>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/one_row_plan.hpp"
#include "flynn/detail/memory.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/error.hpp"
#include "flynn/scoring.hpp"

namespace flynn {

namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

// Saturating arithmetic: an absurd header must give an absurd estimate, never a wrapped one.
std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? kSaturated : out;
}
template <typename... T>
std::uint64_t mul(std::uint64_t a, std::uint64_t b, T... rest) {
  return mul(mul(a, b), rest...);
}
std::uint64_t add(std::uint64_t a, std::uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }

// The hashing code's buffer sizes (fly_hasher.cpp, topk.hpp), for the scratch estimate.
constexpr std::uint64_t kTaskRows = 1024;         // rows per worker task (winners, encoded rows)
constexpr std::uint64_t kGroupBytes = 512 * 1024;  // kernel blocks per lane
constexpr std::uint64_t kKernelLanes = 5;          // f32, u8, s8, i16, i32 block buffers
constexpr std::uint64_t kMaxBlockRows = 32;        // widest vector: 32 int16 lanes
constexpr std::uint64_t kTopKEntryBytes = 8;       // value (≤ 4 bytes) + key
constexpr std::uint64_t kNarrowColumnsMax = 65536;  // FlyHasher keeps 16-bit columns up to here

// TopK's candidate buffer of one row: 2ρ + 32 entries.
std::uint64_t topk_row_bytes(std::uint64_t rho) {
  return mul(add(mul(2, rho), 32), kTopKEntryBytes);
}

}  // namespace

std::uint64_t ModelFootprint::total() const {
  std::uint64_t t = 0;
  for (std::uint64_t part : {counts, score_table, lifting_matrix, sparse_lists, one_row_plan,
                             feature_state, thread_scratch, training_counts})
    t = add(t, part);
  return t;
}

std::string ModelFootprint::describe() const {
  std::vector<std::string> parts;
  auto part = [&](std::uint64_t bytes, const std::string& what) {
    if (bytes) parts.push_back(fmt::format("{} {}", what, memory_size_text(bytes)));
  };
  part(counts, "counts");
  part(score_table, "score table");
  part(lifting_matrix, "lifting matrix");
  part(sparse_lists, "sparse-row lists");
  part(one_row_plan, "one-row layout");
  part(feature_state, "feature state");
  part(thread_scratch, fmt::format("scratch of {} thread{}", threads, threads == 1 ? "" : "s"));
  part(training_counts, fmt::format("training counts of {} thread{}", threads, threads == 1 ? "" : "s"));
  std::string out = memory_size_text(total());
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? " (" : ", ") + parts[i];
  if (!parts.empty()) out += ")";
  return out;
}

namespace {

// The lifting matrix of each hash (two for a paper-half variant, m/2 and m − m/2 units):
// m_p × s uint32 columns, FlyHasher's uint16 copy when its columns fit 16 bits (with signed
// lifting also its unmirrored layout, SignedColumns: m_p × s uint16 + 6 bytes a unit; the
// uint16 copy is then built only when a float, int32 or all-zero row comes, counted as kept), the
// sparse path's inverted lists (ColumnUnits: m_p × s units, columns + 1 starts and, while
// building, columns cursors, 8 bytes each) and the one-row path's layout (OneRowPlan, at
// most plan_bytes_bound; rows no wider than its kMaxColumns), which densify never uses.
// Returns the widest hash input.
std::uint64_t add_hashes(const FlyConfig& c, ModelFootprint& f) {
  // (units, columns, columns of the one-row byte row, signed lifting)
  std::vector<std::array<std::uint64_t, 4>> hashes;
  auto add_hash = [&](const FlyConfig& part) {
    const std::uint64_t columns = part.hash_input_dim();
    const bool signed_rows = part.variant.signed_lifting;
    hashes.push_back({part.m, columns, signed_rows ? columns / 2 : columns, signed_rows});
  };
  if (c.variant.paper_half) {
    // With paper_half_min_columns the second half may hash the row as the first does
    // (decided by the statistics): that form, the wider of the two, is counted.
    for (const FlyConfig& part : c.halves(c.paper_half_min_columns == 0)) add_hash(part);
  } else {
    add_hash(c);
  }
  const bool sparse_path = c.preprocess != Preprocess::Densify;
  std::uint64_t widest = 0;
  for (const auto& [units, columns, byte_columns, signed_lifting] : hashes) {
    widest = std::max(widest, columns);
    const std::uint64_t entries = mul(units, c.s);
    f.lifting_matrix = add(f.lifting_matrix, mul(entries, columns <= kNarrowColumnsMax ? 6 : 4));
    if (signed_lifting && columns <= kNarrowColumnsMax)  // SignedColumns beside the narrow copy
      f.lifting_matrix = add(f.lifting_matrix, add(mul(entries, 2), mul(units, 6)));
    if (sparse_path) f.sparse_lists = add(f.sparse_lists, add(mul(entries, 4), mul(add(columns, 1), 16)));
    if (sparse_path && byte_columns <= kernels::OneRowPlan::kMaxColumns)
      f.one_row_plan = add(f.one_row_plan, kernels::plan_bytes_bound(units, c.s, byte_columns));
    f.build_operations = add(f.build_operations, entries);
  }
  return widest;
}

// Per-feature state: densify's ±1 signs; a variant's encoder (standardisation means and
// inverse scales in double, the model's float statistics, thermometer thresholds or anchor
// grid points).
std::uint64_t feature_state_bytes(const FlyConfig& c) {
  const std::uint64_t d = c.input_dim;
  std::uint64_t bytes = c.preprocess == Preprocess::Densify ? d : 0;
  if (c.variant.standardize)  // the second half's own encoder too, when it may standardise
    bytes = add(bytes, mul(d, 2, 8 + 4, c.paper_half_min_columns ? 2 : 1));
  return add(bytes, mul(c.variant.thermometer + c.variant.anchors, 8));
}

// One thread's hashing buffers: a task's winners and (variants) encoded rows, each kernel
// lane's group of blocks and its rows' top-ρ buffers, the sparse path's m activations and
// one top-ρ buffer, the row buffers, densify's transform buffer, the pair coder's.
std::uint64_t thread_scratch_bytes(const FlyConfig& c, std::uint64_t widest) {
  const std::uint64_t rho = c.rho;
  std::uint64_t per_thread = mul(kTaskRows, rho, 4);
  if (!c.variant.is_paper()) per_thread = add(per_thread, mul(kTaskRows, widest, 4));
  const std::uint64_t lane = add(std::max(kGroupBytes, mul(widest, kMaxBlockRows, 4)),
                                 mul(kTaskRows + kMaxBlockRows, topk_row_bytes(rho)));
  per_thread = add(per_thread, mul(kKernelLanes, lane));
  if (c.preprocess != Preprocess::Densify) per_thread = add(per_thread, add(mul(c.m, 4), topk_row_bytes(rho)));
  per_thread = add(per_thread, mul(widest, 4, 2));
  if (c.preprocess == Preprocess::Densify) per_thread = add(per_thread, mul(widest, 8));
  if (c.pairs)  // PairCoder: a task's codes, the row's taken-cell set (2 × uint32 slots)
    per_thread = add(per_thread, add(mul(kTaskRows, c.codes_per_row(), 4),
                                     mul(std::bit_ceil(std::max<std::uint64_t>(1, mul(2, c.pairs, rho))), 8)));
  return per_thread;
}

}  // namespace

ModelFootprint model_footprint(const FlyConfig& c, std::uint64_t n_classes, ModelUse use,
                               int threads) {
  ModelFootprint f;
  const std::uint64_t m = c.m, L = n_classes;
  const std::uint64_t cells = mul(L, add(m, c.pair_cells()));  // count cells: units and pairs
  f.m = m;
  f.s = c.s;
  f.classes = L;
  f.threads = use == ModelUse::Inspect ? 1 : detail::resolve_threads(threads);
  const std::uint64_t T = static_cast<std::uint64_t>(f.threads);
  // ClassCounts: L × (m + pair cells) uint32.
  f.counts = mul(cells, 4);
  f.build_operations = cells;  // each count decoded and checked
  if (use == ModelUse::Inspect) return f;

  const std::uint64_t widest = add_hashes(c, f);
  f.additions_per_row = mul(m, c.s);
  f.feature_state = feature_state_bytes(c);
  f.thread_scratch = mul(thread_scratch_bytes(c, widest), T);
  if (c.variant.paper_half)  // the two halves' winners of one chunk of rows (all threads)
    f.thread_scratch = add(f.thread_scratch, mul(kTaskRows, std::max<std::uint64_t>(T, 4), c.rho, 4));

  if (use == ModelUse::Predict) {
    // FilterScorer: a bit mask per unit where it packs bits, else the m × L table of
    // filter values in double.
    const bool binary = !c.pairs && FilterScorer::packs_bits(c.gamma, L, c.filter_scoring);
    f.score_table = binary ? mul(m, 8) : mul(cells, 8);
    f.build_operations = add(f.build_operations, binary ? m : cells);
  } else {
    // FlyNN::count: one L × m accumulator per thread that receives rows.
    f.training_counts = mul(f.counts, T);
    f.build_operations = add(f.build_operations, mul(cells, T));
  }
  return f;
}

std::uint64_t default_model_memory_limit(std::uint64_t file_bytes) {
  return std::min(detail::physical_memory_bytes(),
                  add(kModelMemoryFloor, mul(kModelMemoryPerFileByte, file_bytes)));
}

void check_model_footprint(const ModelFootprint& footprint, ModelUse use, std::uint64_t limit,
                           std::uint64_t file_bytes, const std::string& source) {
  const bool by_default = limit == 0;
  if (by_default) limit = default_model_memory_limit(file_bytes);
  if (footprint.total() <= limit) return;
  const char* purpose = use == ModelUse::Inspect   ? "to read its counts"
                        : use == ModelUse::Predict ? "to load and predict"
                                                   : "to load and train";
  const std::string why =
      by_default
          ? fmt::format("the default limit for a model file of {}: {} plus {} bytes per byte "
                        "of the file, at most this machine's {}; --max-model-memory "
                        "SIZE sets another",
                        memory_size_text(file_bytes), memory_size_text(kModelMemoryFloor),
                        kModelMemoryPerFileByte,
                        memory_size_text(detail::physical_memory_bytes()))
          : std::string("--max-model-memory");
  throw Error(fmt::format("{}: the model (m = {}, s = {}, {} class{}) needs an estimated {} {}, "
                          "above the limit of {} ({})",
                          source, footprint.m, footprint.s, footprint.classes,
                          footprint.classes == 1 ? "" : "es", footprint.describe(), purpose,
                          memory_size_text(limit), why));
}

std::string memory_size_text(std::uint64_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  if (b < (1u << 20)) return fmt::format("{:.1f} KiB", b / 1024.0);
  if (b < (1u << 30)) return fmt::format("{:.1f} MiB", b / double(1u << 20));
  // Two decimals from GiB on, so that an estimate just above a limit does not print as
  // equal to it.
  if (b < (std::uint64_t{1} << 50)) return fmt::format("{:.2f} GiB", b / double(1u << 30));
  return fmt::format("{:.2f} PiB", b / double(std::uint64_t{1} << 50));
}

}  // namespace flynn
