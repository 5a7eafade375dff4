#pragma once
// What a model costs before any of it is built: the memory of everything a
// model's configuration and class count imply once it is loaded and used (counts, score
// table, lifting matrix and its copies, per-feature state, every thread's scratch), and the
// work of building and using it. Computed from header fields alone, in saturating 64-bit
// arithmetic, so the loader can refuse a model file before it inflates the counts or
// builds the lifting matrix: a header claiming m = 2^31 − 1, s = 2^30 and 2^20 classes
// yields a huge estimate (at most 2^64 − 1), never a wrapped small one.
//
// The figures mirror the allocations of ClassCounts, FilterScorer (scoring.hpp),
// LiftingMatrix, FlyHasher (its 16-bit column copy, the sparse path's inverted lists and
// activations, the one-row path's layout, the kernels' blocks), Preprocessor and
// RowEncoder; when one of those changes what it allocates, this estimate changes with it
// (model_footprint.cpp names each). What the input rows themselves cost (the rows, one score per row and class) is
// bounded by the data's own limit (--max-input-bytes), not here.
#include <cstdint>
#include <string>

#include "flynn/config.hpp"

namespace flynn {

/// What a caller will do with the model: the parts it builds.
enum class ModelUse {
  Inspect,  ///< read the counts (flynn info): the count table alone
  Predict,  ///< score rows: counts, score table, lifting matrix, hashing scratch
  Train,    ///< also add or remove rows (update, forget): one count table per thread
};

/// Estimated bytes (each saturating at 2^64 − 1) and work of one model.
struct ModelFootprint {
  std::uint64_t counts = 0;          ///< L × m × 4: the count table
  std::uint64_t score_table = 0;     ///< m × L × 8 (γ^count), or m × 8 (binary filters, L ≤ 64)
  std::uint64_t lifting_matrix = 0;  ///< m × s × 4 column indices, + m × s × 2 (16-bit copy)
  std::uint64_t sparse_lists = 0;    ///< the sparse path's inverted lists: m × s × 4 + columns × 16
  /// The one-row path's layout of the lifting matrix, built on the first small call: about
  /// m × s × 1.1 bytes for dense rows; counted at its bound (one_row_plan.hpp), about
  /// m × (2s + 4·w/31 + 12) for rows of w columns.
  std::uint64_t one_row_plan = 0;
  std::uint64_t feature_state = 0;   ///< densify signs, standardisation, thermometer thresholds
  std::uint64_t thread_scratch = 0;  ///< hashing buffers of every thread (m × 4 each, + blocks)
  std::uint64_t training_counts = 0; ///< ModelUse::Train: one L × m × 4 accumulator per thread
  int threads = 1;                   ///< the thread count the scratch is estimated for
  std::uint64_t m = 0, s = 0, classes = 0;  ///< the shape it was estimated for (for messages)

  std::uint64_t build_operations = 0;   ///< L·m counts decoded and scored, m·s columns drawn
  std::uint64_t additions_per_row = 0;  ///< m × s: hashing one dense row

  /// The sum of the parts (saturating).
  std::uint64_t total() const;
  /// "2.6 GiB (counts 512.0 MiB, score table 1.0 GiB, lifting matrix 384.0 MiB, ...)":
  /// the total and its non-zero parts.
  std::string describe() const;
};

/// The footprint of a model with `config` and `n_classes` classes used as `use` on
/// `threads` threads (0 = the machine's; the count resolve_threads gives). Needs no valid
/// config: every product saturates, so absurd fields give an absurd estimate, not an
/// overflow. Allocates nothing.
ModelFootprint model_footprint(const FlyConfig& config, std::uint64_t n_classes, ModelUse use,
                               int threads);

/// Bytes counted as free of justification by the default model-memory limit: the parts
/// no file holds (the lifting matrix and its copies come from the seed, scratch from the
/// shape) of every model of flynn's default shapes (m ≤ 2^17, s ≤ 64: ~0.1 GiB) and of
/// generous explicit ones (m = 2^20, s = 64: ~0.7 GiB).
inline constexpr std::uint64_t kModelMemoryFloor = std::uint64_t{1} << 30;
/// Bytes of memory each byte of a model file justifies under the default limit. flynn's
/// count encoder (counts_deflate.hpp: fixed-Huffman runs, 258 bytes per 13 bits) never
/// packs more than 159 cells into a byte, and a cell costs at most 12 bytes in memory (a
/// 4-byte count and an 8-byte score), so 2048 covers the count table and score table of
/// every model file flynn writes, however sparse its counts; only a stream packed denser
/// than that (zlib's own deflate reaches 1032:1), i.e. a table the file does not really
/// hold, can exceed it.
inline constexpr std::uint64_t kModelMemoryPerFileByte = 2048;

/// The default model-memory limit (--max-model-memory, flynn.load) for a model file of
/// `file_bytes` bytes: min(this machine's physical memory, kModelMemoryFloor +
/// kModelMemoryPerFileByte × file_bytes). The machine term refuses what could not be held
/// at all (what the loader has always refused; the guard of training and prediction,
/// FlyConfig::check_memory, still asks for half the machine where they allocate); the file
/// term is what the file can justify: a 130 KB file declaring m = 2^26 (2.4 GiB to use) is
/// refused, a 2.2 MB 2500-class model (1.9 GiB) is not.
std::uint64_t default_model_memory_limit(std::uint64_t file_bytes);

/// Throws flynn::Error when `footprint.total()` exceeds `limit` (0: the default for a file
/// of `file_bytes`): "SOURCE: the model (m = 67108864, s = 1, 2 classes) needs an estimated
/// 2.6 GiB (counts …, …) to load and predict, above the limit of 1.3 GiB (…)", naming the
/// flag that sets another.
void check_model_footprint(const ModelFootprint& footprint, ModelUse use, std::uint64_t limit,
                           std::uint64_t file_bytes, const std::string& source);

/// "1.25 GiB", "512.0 MiB", "130.0 KiB", "17 B": binary units, for the messages above.
std::string memory_size_text(std::uint64_t bytes);

}  // namespace flynn
