#include "flynn/fly_hasher.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "core/flyhash_kernels.hpp"
#include "core/one_row_kernel.hpp"
#include "core/one_row_plan.hpp"
#include "core/signed_columns.hpp"
#include "core/sparse_hash.hpp"

#include "flynn/error.hpp"
#include "flynn/detail/progress_tracker.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/detail/simd.hpp"
#include "flynn/random.hpp"

namespace flynn {

namespace {

// Rows handed to one worker at a time: large enough to amortise the kernel set-up, small
// enough to balance threads and bound the per-worker winners buffer.
constexpr std::size_t kTaskRows = 1024;
constexpr float kMaxExactInteger = 16777216.0f;  // 2^24: every integer up to it is a float

// The sparse path costs about 2 cycles per scattered addition (nnz·s·m/d of them) plus
// about 3 per unit for clearing and scanning the activations; the dense kernels sustain
// about 6 float (12 int16) additions per cycle over all m·s. A row goes sparse when that
// estimate is lower (per unit of m: 2·nnz·s/d + 3 < s/rate).
bool sparse_is_cheaper(std::uint32_t nnz, std::uint32_t d, std::uint32_t s, double rate) {
  return 2.0 * nnz * s / d + 3.0 < s / rate;
}

// One kernel per kind of row; by_path in WorkerScratch is indexed by it.
enum class RowPath { F32, U8, S8, I16, I32, SparseF32, SparseInt, Count };

struct PathRules {
  bool integers = true;  // exact integer path allowed (not with densify)
  bool sparse = true;    // sparse path allowed (not with densify)
  std::uint32_t s = 0;
};

// T is float or std::uint8_t: a byte row is judged on the float values of its bytes, so
// it takes exactly the path a float row holding the same numbers takes.
template <typename T>
RowPath choose_path(const T* x, std::uint32_t d, const PathRules& rules) {
  bool integral = rules.integers;
  bool non_negative = true;
  float max_abs = 0.0f;
  std::uint32_t nnz = 0;
  for (std::uint32_t j = 0; j < d; ++j) {
    const float v = static_cast<float>(x[j]);
    nnz += v != 0.0f;
    non_negative &= v >= 0.0f;
    const float a = std::fabs(v);
    // Integer test by truncation (exact for |v| ≤ 2^24, checked first; NaN fails it):
    // nearbyint here was a library call per value, a visible share of a one-row call.
    if (integral &&
        (!(a <= kMaxExactInteger) || static_cast<float>(static_cast<std::int32_t>(v)) != v))
      integral = false;
    max_abs = std::max(max_abs, a);
  }
  if (integral) {
    const double bound = static_cast<double>(rules.s) * max_abs;
    if (bound <= 2147483647.0) {
      const bool narrow = bound <= 32767.0;
      if (rules.sparse && sparse_is_cheaper(nnz, d, rules.s, narrow ? 12.0 : 6.0))
        return RowPath::SparseInt;
      if (narrow && non_negative && max_abs <= 255.0f) return RowPath::U8;
      if (narrow && max_abs <= 127.0f) return RowPath::S8;
      return narrow ? RowPath::I16 : RowPath::I32;
    }
  }
  return rules.sparse && sparse_is_cheaper(nnz, d, rules.s, 6.0) ? RowPath::SparseF32
                                                                  : RowPath::F32;
}

PathRules path_rules(const FlyConfig& c, bool integer_path, bool sparse_path) {
  PathRules rules;
  rules.integers = integer_path && c.preprocess != Preprocess::Densify;
  rules.sparse = sparse_path && c.preprocess != Preprocess::Densify;
  rules.s = c.s;
  return rules;
}

// Per-worker buffers for one kernel: block elements E, activations T.
template <typename E, typename T, kernels::Lane kLane>
struct BlockScratch {
  static constexpr kernels::Lane lane = kLane;
  std::vector<E> xt;                    // a group of blocks, each d' × B, feature-major
  std::vector<kernels::TopK<T>> topk;   // one per block of the group
  std::vector<std::uint64_t> salts;     // the group's rows' row_salt
};

struct WorkerScratch {
  std::vector<float> row;       // one preprocessed row
  std::vector<float> raw;       // one byte row widened to float, for the float kernels
  std::vector<float> encoded;   // a task's rows, encoded (variants only)
  BlockScratch<float, float, kernels::Lane::F32> f32;
  BlockScratch<std::uint8_t, std::int16_t, kernels::Lane::U8> u8;
  BlockScratch<std::int8_t, std::int16_t, kernels::Lane::S8> s8;
  BlockScratch<std::int16_t, std::int16_t, kernels::Lane::I16> i16;
  BlockScratch<std::int32_t, std::int32_t, kernels::Lane::I32> i32;
  std::vector<std::uint32_t> winners;  // kTaskRows × ρ
  std::vector<std::size_t> by_path[static_cast<int>(RowPath::Count)];
  kernels::SparseRowHasher<float> sparse_f32;
  kernels::SparseRowHasher<std::int32_t> sparse_int;
  std::vector<std::uint32_t> nz_columns;
  std::vector<float> nz_f32;
  std::vector<std::int32_t> nz_int;
  std::vector<std::uint8_t> byte_row;    // one row in a one-row layout (+ alignment), then as bytes
  kernels::TopK<std::int32_t> one_topk;  // its top-ρ
};

// The row as floats: the row itself, or (for bytes) its values widened into `buffer`.
inline const float* float_row(const float* x, std::uint32_t, std::vector<float>&) { return x; }
inline const float* float_row(const std::uint8_t* x, std::uint32_t d, std::vector<float>& buffer) {
  buffer.resize(d);
  for (std::uint32_t j = 0; j < d; ++j) buffer[j] = static_cast<float>(x[j]);
  return buffer.data();
}

// The salt (FlyHasher::row_salt) of K rows at once, each row of d values of type T as
// floats (bytes widened exactly): the value-by-value chain is serial, a multiply's latency
// per value, so K independent chains interleaved keep the multipliers busy. The values are
// those of one chain at a time.
template <std::size_t K, typename T>
void salt_chains(const T* const* x, std::uint32_t d, std::uint64_t* out) {
  std::uint64_t h[K];
  for (std::size_t r = 0; r < K; ++r) h[r] = 0x243F6A8885A308D3ULL ^ d;
  for (std::uint32_t j = 0; j < d; ++j)
    for (std::size_t r = 0; r < K; ++r) {
      const float raw = static_cast<float>(x[r][j]);
      const float v = raw == 0.0f ? 0.0f : raw;  // −0 hashes as +0
      std::uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      h[r] = mix64(h[r] ^ bits) + j;
    }
  for (std::size_t r = 0; r < K; ++r) out[r] = mix64(h[r]);
}

// The salts of rows ids[0..n) (rows + ids[i]·stride): eight chains at a time, the rest one
// by one.
constexpr std::size_t kSaltChains = 8;
template <typename T>
void row_salts(const T* rows, std::size_t stride, const std::size_t* ids, std::size_t n, std::uint32_t d,
               std::uint64_t* out) {
  const T* x[kSaltChains];
  std::size_t i = 0;
  for (; i + kSaltChains <= n; i += kSaltChains) {
    for (std::size_t r = 0; r < kSaltChains; ++r) x[r] = rows + ids[i + r] * stride;
    salt_chains<kSaltChains>(x, d, out + i);
  }
  for (; i < n; ++i) {
    x[0] = rows + ids[i] * stride;
    salt_chains<1>(x, d, out + i);
  }
}

// FlyHasher::row_salt of one row of any element type.
template <typename T>
std::uint64_t salt_of(const T* x, std::uint32_t d) {
  std::uint64_t salt = 0;
  salt_chains<1>(&x, d, &salt);
  return salt;
}

// Hashes sparse rows one by one through the inverted lists.
template <typename T>
void hash_sparse(const FlyHasher& h, const kernels::ColumnUnits& lists, const T* rows,
                 std::size_t stride, std::size_t first, const std::vector<std::size_t>& ids,
                 bool integral, WorkerScratch& sc, std::uint32_t* out) {
  const std::uint32_t d = h.row_width();
  sc.row.resize(d);
  for (std::size_t i : ids) {
    const T* x = rows + i * stride;
    const auto offset = static_cast<std::uint32_t>(salt_of(x, d) % h.m());
    sc.nz_columns.clear();
    sc.nz_f32.clear();
    sc.nz_int.clear();
    if (integral) {
      for (std::uint32_t j = 0; j < d; ++j) {
        if (x[j] == 0.0f) continue;
        sc.nz_columns.push_back(j);
        sc.nz_int.push_back(static_cast<std::int32_t>(x[j]));
      }
      sc.sparse_int.hash(lists, h.m(), h.rho(), sc.nz_columns.data(), sc.nz_int.data(),
                         sc.nz_columns.size(), offset, out + (i - first) * h.rho());
    } else {
      // None or Normalize: zeros stay zeros
      h.preprocessor().apply(float_row(x, d, sc.raw), sc.row.data());
      for (std::uint32_t j = 0; j < d; ++j) {
        if (sc.row[j] == 0.0f) continue;
        sc.nz_columns.push_back(j);
        sc.nz_f32.push_back(sc.row[j]);
      }
      sc.sparse_f32.hash(lists, h.m(), h.rho(), sc.nz_columns.data(), sc.nz_f32.data(),
                         sc.nz_columns.size(), offset, out + (i - first) * h.rho());
    }
  }
}

// The one-row path (fly_hasher.hpp). Writes the first plan.columns values of integer row
// x as bytes into `bytes`, and how they hold them; false when they do not fit a byte (then
// the row stays with the block kernels).
template <typename T>
bool to_bytes(const T* x, const kernels::OneRowPlan& plan, std::uint8_t* bytes,
              kernels::ByteValues& values) {
  float lo = 0.0f, hi = 0.0f;
  for (std::uint32_t c = 0; c < plan.columns; ++c) {
    lo = std::min(lo, static_cast<float>(x[c]));
    hi = std::max(hi, static_cast<float>(x[c]));
  }
  if (lo >= 0.0f && hi <= 255.0f && !plan.signed_lifting) {
    values = kernels::ByteValues::Unsigned;
  } else if (lo >= -127.0f && hi <= 127.0f) {
    values = kernels::ByteValues::Signed;  // negating a value (signed lifting) stays in range
  } else {
    return false;
  }
  for (std::uint32_t c = 0; c < plan.columns; ++c)
    bytes[c] = static_cast<std::uint8_t>(static_cast<std::int32_t>(x[c]));
  return true;
}

// Hashes the rows ids[from..] (one integer path) that fit bytes through the one-row kernel,
// and leaves the others at the end of `ids` for the block kernels.
template <typename T>
void hash_one_rows(const FlyHasher& h, const kernels::OneRowPlan& plan, const T* rows,
                   std::size_t stride, std::size_t first, std::vector<std::size_t>& ids,
                   std::size_t from, WorkerScratch& sc, std::uint32_t* out) {
  const std::uint32_t d = h.row_width(), rho = h.rho(), m = h.m();
  sc.byte_row.resize(plan.row_bytes() + 63 + plan.columns);
  auto* buf = reinterpret_cast<std::uint8_t*>(
      (reinterpret_cast<std::uintptr_t>(sc.byte_row.data()) + 63) & ~std::uintptr_t{63});
  std::uint8_t* bytes = buf + plan.row_bytes();
  std::size_t kept = from;
  for (std::size_t j = from; j < ids.size(); ++j) {
    const std::size_t i = ids[j];
    const T* x = rows + i * stride;
    kernels::ByteValues values{};
    if (!to_bytes(x, plan, bytes, values)) {
      ids[kept++] = i;
      continue;
    }
    plan.lay_out_row(bytes, buf);
    sc.one_topk.reset(1, rho, m);
    sc.one_topk.set_offset(0, static_cast<std::uint32_t>(salt_of(x, d) % m));
    kernels::project_one_row(plan, buf, values, sc.one_topk);
    sc.one_topk.winners(0, out + (i - first) * rho);
  }
  ids.resize(kept);
}

// Cache tiling. A block's columns (d' × B elements) stay in L1 while the kernel sweeps the
// units over it; the lifting matrix's columns (m·s indices, 17 MB for Fashion-MNIST) do
// not fit any cache, so streaming all of them past every block would make memory the
// limit once several cores do it. Instead, up to kGroupBytes of blocks are prepared
// together and the units are swept in chunks of about kChunkBytes of indices, each chunk
// over every block of the group: the matrix then streams once per group, from L2 for the
// other blocks.
constexpr std::size_t kGroupBytes = 512 * 1024;
constexpr std::size_t kChunkBytes = 128 * 1024;

// Hashes the rows `ids` (indices into `rows`, all of one path) in blocks of B rows.
// Winners of row ids[i] go to out + (ids[i] − first) · ρ.
template <typename T, typename Scratch>
void hash_group(const FlyHasher& h, const kernels::Columns& cols, const T* rows,
                std::size_t stride, std::size_t first, const std::vector<std::size_t>& ids,
                Scratch& sc, std::vector<float>& row, std::vector<float>& raw,
                std::uint32_t* out) {
  if (ids.empty()) return;
  using E = typename decltype(sc.xt)::value_type;
  const std::uint32_t d = h.row_width();
  // The signed layout reads only the first half of a mirrored row [e, −e].
  const std::uint32_t width = cols.units ? d / 2 : h.preprocessor().output_dim();
  const std::uint32_t rho = h.rho(), m = h.m();
  const kernels::BlockShape shape = kernels::block_shape(Scratch::lane, width);
  const std::size_t B = shape.rows;
  const std::size_t block_elems = std::size_t(width) * B;
  const std::size_t blocks_needed = (ids.size() + B - 1) / B;
  const std::size_t group = std::clamp<std::size_t>(kGroupBytes / (block_elems * sizeof(E)), 1,
                                                    blocks_needed);
  const std::size_t index_bytes = cols.narrow ? 2 : 4;
  const auto chunk = static_cast<std::uint32_t>(std::max<std::size_t>(
      64, (kChunkBytes / (std::size_t(cols.s) * index_bytes)) & ~std::size_t(3)));
  sc.xt.resize(group * block_elems);
  if (sc.topk.size() < group) sc.topk.resize(group);
  row.resize(width);
  for (std::size_t start = 0; start < ids.size(); start += group * B) {
    const std::size_t in_group = std::min(ids.size() - start, group * B);
    const std::size_t blocks = (in_group + B - 1) / B;
    std::fill(sc.xt.begin(), sc.xt.begin() + blocks * block_elems, E(0));
    for (std::size_t k = 0; k < blocks; ++k) sc.topk[k].reset(B, rho, m);
    sc.salts.resize(in_group);
    row_salts(rows, stride, ids.data() + start, in_group, d, sc.salts.data());
    for (std::size_t i = 0; i < in_group; ++i) {
      const T* x = rows + ids[start + i] * stride;
      const std::size_t k = i / B, b = i % B;
      E* xt = sc.xt.data() + k * block_elems;
      sc.topk[k].set_offset(b, static_cast<std::uint32_t>(sc.salts[i] % m));
      if constexpr (std::is_same_v<E, float>) {
        h.preprocessor().apply(float_row(x, d, raw), row.data());
        for (std::uint32_t f = 0; f < width; ++f) xt[std::size_t(f) * B + b] = row[f];
      } else {  // integer rows: exact raw values (normalising would only scale them)
        for (std::uint32_t f = 0; f < width; ++f) xt[std::size_t(f) * B + b] = static_cast<E>(x[f]);
      }
    }
    // Lanes past the last row of a partial block are zeros nobody reads back.
    for (std::size_t b = in_group - (blocks - 1) * B; b < B; ++b) sc.topk[blocks - 1].ignore_row(b);
    for (std::uint32_t u = 0; u < m; u += chunk) {
      const std::uint32_t end = std::min(m, u + chunk);
      for (std::size_t k = 0; k < blocks; ++k)
        kernels::project_wta(sc.xt.data() + k * block_elems, cols, shape, u, end, sc.topk[k]);
    }
    for (std::size_t i = 0; i < in_group; ++i)
      sc.topk[i / B].winners(i % B, out + (ids[start + i] - first) * rho);
  }
}

// Variants: a task's `count` rows encoded (standardised, thresholded, mirrored, …) into
// float rows of `row_width` in sc.encoded, which the kernels then read.
template <typename T>
void encode_task_rows(const RowEncoder& encoder, const T* rows, std::size_t stride, std::size_t count,
                      std::uint32_t input_dim, std::uint32_t row_width, WorkerScratch& sc) {
  sc.encoded.resize(count * row_width);
  std::vector<float>& widened = sc.raw;
  for (std::size_t i = 0; i < count; ++i) {
    const float* src = float_row(rows + i * stride, input_dim, widened);
    encoder.encode(src, sc.encoded.data() + i * row_width);
  }
}

}  // namespace

FlyHasher::~FlyHasher() = default;
FlyHasher::FlyHasher(FlyHasher&&) noexcept = default;
FlyHasher& FlyHasher::operator=(FlyHasher&&) noexcept = default;

// The width of the rows the kernels read: the raw row for the paper's method (densify
// pads inside the preprocessor), the encoded row for a variant.
static std::uint32_t kernel_row_width(const FlyConfig& c) {
  return c.variant.is_paper() ? c.input_dim : c.hash_input_dim();
}

FlyHasher::FlyHasher(const FlyConfig& config, int threads)
    : config_(config),
      row_width_(kernel_row_width(config)),
      preprocessor_(config.preprocess, kernel_row_width(config), config.seed),
      lifting_(),
      sparse_(std::make_unique<kernels::SparseLists>()),
      one_row_(std::make_unique<kernels::OneRowPlanCache>()) {
  config_.validate();
  detail::simd::pin_target_from_environment();  // before any kernel runs
  build_threads_ = threads;
  if (config_.variant.paper_half) {
    const std::array<FlyConfig, 2> parts = config_.halves();
    for (int i = 0; i < 2; ++i) halves_[i] = std::make_unique<FlyHasher>(parts[i], threads);
    row_width_ = config_.input_dim;  // both halves read the raw row
    return;
  }
  config_.check_memory(0);  // the lifting matrix, allocated next
  lifting_ = LiftingMatrix(config_.m, config_.s, config_.hash_input_dim(), config_.seed, threads,
                           config_.variant.signed_lifting);
  if (!config_.variant.is_paper() && !config_.variant.standardize)
    encoder_ = std::make_unique<RowEncoder>(config_, FeatureStats{});
  if (config_.hash_input_dim() <= 65536) {
    narrow_ = std::make_unique<kernels::NarrowColumns>();
    if (config_.variant.signed_lifting) {
      signed_columns_ = std::make_unique<kernels::SignedColumns>(
          kernels::SignedColumns::build(lifting_, config_.hash_input_dim() / 2));
    } else {
      narrow_->get(lifting_);
    }
  }
}

void FlyHasher::set_feature_stats(const FeatureStats& stats) {
  if (halves_[0]) {
    halves_[0]->set_feature_stats(stats);
    const bool raw = paper_half_hashes_raw_row(config_, stats);
    if (raw != second_half_hashes_raw_row()) {
      auto second = std::make_unique<FlyHasher>(config_.halves(raw)[1], build_threads_);
      second->set_integer_path(integer_path_);
      second->set_sparse_path(sparse_path_);
      second->set_one_row_path(one_row_path_);
      halves_[1] = std::move(second);
    }
    halves_[1]->set_feature_stats(stats);
    return;
  }
  if (!config_.variant.standardize) {
    if (!stats.empty() && stats.mean.size() != config_.input_dim)
      throw Error(fmt::format("feature statistics for {} features do not fit d = {}",
                              stats.mean.size(), config_.input_dim));
    return;
  }
  encoder_ = std::make_unique<RowEncoder>(config_, stats);
}

const RowEncoder* FlyHasher::require_encoder() const {
  if (config_.variant.is_paper()) return nullptr;
  if (!encoder_)
    throw Error(fmt::format("variant {} standardises features, but the model has no feature "
                            "statistics yet (train it first)",
                            variant_name(config_.variant)));
  return encoder_.get();
}

std::uint64_t FlyHasher::row_salt(const float* row, std::uint32_t d) { return salt_of(row, d); }

void FlyHasher::hash_stream(const float* rows, std::size_t n, int threads,
                            const BlockSink& sink, const ProgressFn& progress) const {
  if (halves_[0]) return stream_halves(DataView(rows, n, config_.input_dim), threads, sink, progress);
  stream_rows(rows, config_.input_dim, n, threads, sink, progress);
}

void FlyHasher::stream_halves(const DataView& rows, int threads, const BlockSink& sink,
                              const ProgressFn& progress) const {
  const std::size_t n = rows.n_rows();
  if (n == 0) return;
  const FlyHasher& first = *halves_[0];
  const FlyHasher& second = *halves_[1];
  const std::uint32_t rho = config_.rho, rho0 = first.rho(), rho1 = second.rho(), shift = first.m();
  const int workers = detail::resolve_threads(threads);
  detail::ProgressTracker tracker(progress, n);
  // Chunks of rows keep the two halves' winner buffers small (ρ words per row each) while
  // each half still hashes many rows per call; a task of kTaskRows rows is joined and
  // delivered by one worker, as stream_rows delivers its tasks.
  const std::size_t chunk_rows = kTaskRows * static_cast<std::size_t>(std::max(workers, 4));
  std::vector<std::uint32_t> w0, w1;
  std::vector<std::vector<std::uint32_t>> joined(static_cast<std::size_t>(workers));
  for (std::size_t start = 0; start < n; start += chunk_rows) {
    const std::size_t count = std::min(chunk_rows, n - start);
    const DataView part = rows.rows(start, count);
    w0.resize(count * rho0);
    w1.resize(count * rho1);
    first.hash(part, w0.data(), workers);
    second.hash(part, w1.data(), workers);
    const std::size_t tasks = (count + kTaskRows - 1) / kTaskRows;
    detail::parallel_for(tasks, workers, [&](std::size_t task, int worker) {
      const std::size_t lo = task * kTaskRows, rows_here = std::min(kTaskRows, count - lo);
      std::vector<std::uint32_t>& out = joined[static_cast<std::size_t>(worker)];
      out.resize(rows_here * rho);
      for (std::size_t i = 0; i < rows_here; ++i) {
        std::uint32_t* o = out.data() + i * rho;
        std::copy_n(w0.data() + (lo + i) * rho0, rho0, o);
        const std::uint32_t* b = w1.data() + (lo + i) * rho1;
        for (std::uint32_t k = 0; k < rho1; ++k) o[rho0 + k] = b[k] + shift;
      }
      sink(worker, start + lo, rows_here, out.data());
    });
    tracker.advance(count);
  }
}

void FlyHasher::hash_stream(const DataView& rows, int threads, const BlockSink& sink,
                            const ProgressFn& progress) const {
  if (rows.n_cols() != config_.input_dim)
    throw Error(fmt::format("{} features per row, but the hasher expects d = {}", rows.n_cols(),
                            config_.input_dim));
  if (halves_[0]) return stream_halves(rows, threads, sink, progress);
  if (rows.element_type() == ElementType::UInt8) {
    stream_rows(rows.bytes(), rows.row_stride(), rows.n_rows(), threads, sink, progress);
  } else {
    stream_rows(rows.floats(), rows.row_stride(), rows.n_rows(), threads, sink, progress);
  }
}

kernels::Columns FlyHasher::mirrored_columns() const {
  kernels::Columns c;
  c.s = config_.s;
  if (narrow_) {
    c.narrow = narrow_->get(lifting_);
  } else {
    c.wide = lifting_.data().data();
  }
  return c;
}

kernels::Columns FlyHasher::unmirrored_columns() const {
  kernels::Columns c;
  c.s = config_.s;
  c.narrow = signed_columns_->columns.data();
  c.units = signed_columns_->units.data();
  c.positives = signed_columns_->positives.data();
  return c;
}

const kernels::OneRowPlan* FlyHasher::one_row_plan_for(kernels::Lane lane, std::size_t partial,
                                                       std::size_t call_rows) const {
  // The rows of an integer path that would leave a partial block of at most 3/4 of its rows
  // (1/2 with the shuffle kernel, whose row costs about 1.5 rows of a block where the
  // permute kernel's costs 1.1). A call of fewer rows than a block builds the one-row
  // layout if it is not there yet; larger calls use it only once built, so batch jobs
  // never pay for building it.
  if (partial == 0) return nullptr;
  const std::optional<kernels::OneRowLayout> layout = kernels::one_row_layout();
  if (!layout) return nullptr;
  const std::size_t B = kernels::block_shape(lane, preprocessor_.output_dim()).rows;
  const std::size_t most = *layout == kernels::OneRowLayout::Permute128 ? B * 3 / 4 : B / 2;
  if (partial > most) return nullptr;
  return call_rows < B ? one_row_->get(lifting_, config_.variant.signed_lifting, *layout)
                       : one_row_->built_plan(*layout);
}

template <typename T>
void FlyHasher::stream_rows(const T* rows, std::size_t stride, std::size_t n, int threads,
                            const BlockSink& sink, const ProgressFn& progress) const {
  if (n == 0) return;
  const RowEncoder* encoder = require_encoder();
  const int workers = detail::resolve_threads(threads);
  const std::size_t tasks = (n + kTaskRows - 1) / kTaskRows;
  std::vector<WorkerScratch> scratch(static_cast<std::size_t>(workers));
  detail::ProgressTracker tracker(progress, n);
  const PathRules rules = path_rules(config_, integer_path_, sparse_path_);
  // A signed hash builds the mirrored layout only when a float, uint8 (all-zero) or int32
  // row needs it.
  const kernels::Columns unsigned_cols = signed_columns_ ? kernels::Columns{} : mirrored_columns();
  const kernels::Columns unmirrored = signed_columns_ ? unmirrored_columns() : kernels::Columns{};
  detail::parallel_for(tasks, workers, [&](std::size_t task, int worker) {
    WorkerScratch& sc = scratch[static_cast<std::size_t>(worker)];
    const std::size_t first = task * kTaskRows;
    const std::size_t count = std::min(kTaskRows, n - first);
    sc.winners.resize(count * config_.rho);
    std::uint32_t* out = sc.winners.data();
    // Hashes the task's rows as the kernels read them: `krows` rows `kstride` elements
    // apart, of which rows [kfirst, kfirst + count) are this task's (winners of row i go
    // to out + (i − kfirst)·ρ).
    auto hash_rows = [&](const auto* krows, std::size_t kstride, std::size_t kfirst) {
      for (auto& v : sc.by_path) v.clear();
      for (std::size_t i = kfirst; i < kfirst + count; ++i) {
        const RowPath p = choose_path(krows + i * kstride, row_width_, rules);
        sc.by_path[static_cast<int>(p)].push_back(i);
      }
      auto ids = [&](RowPath p) -> std::vector<std::size_t>& {
        return sc.by_path[static_cast<int>(p)];
      };
      if (one_row_path_) {
        const std::pair<RowPath, kernels::Lane> paths[] = {{RowPath::U8, kernels::Lane::U8},
                                                           {RowPath::S8, kernels::Lane::S8},
                                                           {RowPath::I16, kernels::Lane::I16},
                                                           {RowPath::I32, kernels::Lane::I32}};
        for (const auto& [path, lane] : paths) {
          std::vector<std::size_t>& v = ids(path);
          const std::size_t partial = v.size() % kernels::block_shape(lane, preprocessor_.output_dim()).rows;
          if (const kernels::OneRowPlan* plan = one_row_plan_for(lane, partial, n))
            hash_one_rows(*this, *plan, krows, kstride, kfirst, v, v.size() - partial, sc, out);
        }
      }
      const bool need_mirrored = !ids(RowPath::F32).empty() || !ids(RowPath::U8).empty() ||
                                 !ids(RowPath::I32).empty();
      const kernels::Columns mirrored =
          signed_columns_ && need_mirrored ? mirrored_columns() : unsigned_cols;
      const kernels::Columns& small_ints = signed_columns_ ? unmirrored : unsigned_cols;
      hash_group(*this, mirrored, krows, kstride, kfirst, ids(RowPath::F32), sc.f32, sc.row, sc.raw, out);
      hash_group(*this, mirrored, krows, kstride, kfirst, ids(RowPath::U8), sc.u8, sc.row, sc.raw, out);
      hash_group(*this, small_ints, krows, kstride, kfirst, ids(RowPath::S8), sc.s8, sc.row, sc.raw, out);
      hash_group(*this, small_ints, krows, kstride, kfirst, ids(RowPath::I16), sc.i16, sc.row, sc.raw, out);
      hash_group(*this, mirrored, krows, kstride, kfirst, ids(RowPath::I32), sc.i32, sc.row, sc.raw, out);
      const auto& sparse_f32 = ids(RowPath::SparseF32);
      const auto& sparse_int = ids(RowPath::SparseInt);
      if (!sparse_f32.empty() || !sparse_int.empty()) {
        const kernels::ColumnUnits& lists = sparse_->get(lifting_);
        hash_sparse(*this, lists, krows, kstride, kfirst, sparse_f32, false, sc, out);
        hash_sparse(*this, lists, krows, kstride, kfirst, sparse_int, true, sc, out);
      }
    };
    if (encoder) {
      encode_task_rows(*encoder, rows + first * stride, stride, count, config_.input_dim, row_width_, sc);
      hash_rows(static_cast<const float*>(sc.encoded.data()), std::size_t{row_width_}, std::size_t{0});
    } else {
      hash_rows(rows, stride, first);
    }
    sink(worker, first, count, out);
    tracker.advance(count);
  });
}

void FlyHasher::hash(const float* rows, std::size_t n, std::uint32_t* winners, int threads,
                     const ProgressFn& progress) const {
  const std::uint32_t rho = config_.rho;
  hash_stream(
      rows, n, threads,
      [&](int, std::size_t first, std::size_t count, const std::uint32_t* w) {
        std::memcpy(winners + first * rho, w, count * rho * sizeof(std::uint32_t));
      },
      progress);
}

void FlyHasher::hash(const DataView& rows, std::uint32_t* winners, int threads,
                     const ProgressFn& progress) const {
  const std::uint32_t rho = config_.rho;
  hash_stream(
      rows, threads,
      [&](int, std::size_t first, std::size_t count, const std::uint32_t* w) {
        std::memcpy(winners + first * rho, w, count * rho * sizeof(std::uint32_t));
      },
      progress);
}

std::vector<std::uint32_t> FlyHasher::hash(const float* rows, std::size_t n, int threads) const {
  std::vector<std::uint32_t> out(n * config_.rho);
  hash(rows, n, out.data(), threads);
  return out;
}

bool FlyHasher::has_one_row_kernel() const {
  if (halves_[0]) return halves_[0]->has_one_row_kernel() && halves_[1]->has_one_row_kernel();
  const std::optional<kernels::OneRowLayout> layout = kernels::one_row_layout();
  return layout && one_row_->get(lifting_, config_.variant.signed_lifting, *layout) != nullptr;
}

const char* FlyHasher::row_path(const DataView& rows) const {
  if (rows.n_rows() == 0) return "";
  if (!rows.bytes()) return row_path(rows.floats());
  std::vector<float> widened;
  return row_path(float_row(rows.bytes(), static_cast<std::uint32_t>(rows.n_cols()), widened));
}

const char* FlyHasher::row_path(const float* raw) const {
  if (halves_[0]) return halves_[0]->row_path(raw);
  std::vector<float> encoded;
  const float* row = raw;
  if (const RowEncoder* encoder = require_encoder()) {
    encoded.resize(row_width_);
    encoder->encode(raw, encoded.data());
    row = encoded.data();
  }
  switch (choose_path(row, row_width_, path_rules(config_, integer_path_, sparse_path_))) {
    case RowPath::F32: return "float";
    case RowPath::U8: return "uint8";
    case RowPath::S8:
      return "int8";
    case RowPath::I16: return "int16";
    case RowPath::I32: return "int32";
    case RowPath::SparseF32: return "sparse-float";
    case RowPath::SparseInt: return "sparse-int";
    default: return "?";
  }
}

void FlyHasher::hash_row_reference(const float* raw, std::uint32_t* winners) const {
  if (halves_[0]) {
    halves_[0]->hash_row_reference(raw, winners);
    const std::uint32_t rho0 = halves_[0]->rho();
    halves_[1]->hash_row_reference(raw, winners + rho0);
    for (std::uint32_t k = rho0; k < config_.rho; ++k) winners[k] += halves_[0]->m();
    return;
  }
  std::vector<float> encoded;
  const float* x = raw;
  if (const RowEncoder* encoder = require_encoder()) {
    encoded.resize(row_width_);
    encoder->encode(raw, encoded.data());
    x = encoded.data();
  }
  const std::uint32_t d = row_width_, m = config_.m, s = config_.s;
  const RowPath path = choose_path(x, d, path_rules(config_, integer_path_, false));
  // Activations as doubles: exact for integer rows, and exactly the float sums (computed
  // in float, in column order) for the float path.
  std::vector<double> act(m);
  if (path == RowPath::F32) {
    std::vector<float> p(preprocessor_.output_dim());
    preprocessor_.apply(x, p.data());
    for (std::uint32_t i = 0; i < m; ++i) {
      float acc = 0.0f;
      const std::uint32_t* c = lifting_.row(i);
      for (std::uint32_t k = 0; k < s; ++k) acc += p[c[k]];
      act[i] = acc;
    }
  } else {
    for (std::uint32_t i = 0; i < m; ++i) {
      std::int64_t acc = 0;
      const std::uint32_t* c = lifting_.row(i);
      for (std::uint32_t k = 0; k < s; ++k) acc += static_cast<std::int64_t>(x[c[k]]);
      act[i] = static_cast<double>(acc);
    }
  }
  const std::uint32_t off = static_cast<std::uint32_t>(row_salt(x, d) % m);
  std::vector<std::uint32_t> order(m);
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](std::uint32_t i) { return i >= off ? i - off : i + m - off; };
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (act[a] != act[b]) return act[a] > act[b];
    return key(a) < key(b);
  });
  std::copy(order.begin(), order.begin() + config_.rho, winners);
  std::sort(winners, winners + config_.rho);
}

}  // namespace flynn
