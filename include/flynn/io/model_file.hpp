#pragma once
// The flynn model file: versioned, self-describing, checksummed binary.
//
// Layout (all integers little-endian):
//   magic        8 bytes  "FLYNNMDL"
//   version      u32      format version: 1, or 2 when the model has a variant other than
//                         paper or a set temperature, or 3 when it also carries a
//                         table section, or 4 when it has class weights, or 5 when its
//                         variant has anchor units, or 6 when it scores relatively
//                         (FilterScoring::Relative; this build reads all six)
//   body_length  u64      bytes of the body that follows
//   body:
//     d, m, s, rho              u32 × 4
//     gamma                     f64 (IEEE-754 bits)
//     seed                      u64
//     preprocess                u8   (0 none, 1 normalize, 2 densify)
//     hash_version              u8   (1: SplitMix64/Floyd lifting matrix, rotation tie rule)
//     flags                     u16  (bit 0: counts are a differential-privacy release)
//     dp_epsilon                f64  (0 unless DP)
//     dp_T, dp_parties          u32 × 2 (0 unless DP)
//     -- versions 2 to 6: --
//     variant flags             u8   (bit 0 standardize, bit 1 signed lifting, bit 2 paper half,
//                                     bit 3 (version 5) anchor units)
//     levels K                  u16  (thermometer K, or anchors K with bit 3; 0 = off)
//     quantize Q                u16  (0 = off)
//     temperature               f64  (> 0: fitted or set; 0: not set, Defaults::temperature;
//                                     before version 10 a set one has prior weight 1)
//     has_stats                 u8   (1 when the variant standardises)
//     d × { f32 mean, f32 scale }    when has_stats
//     -- versions 4 to 6: has_table u8 (1: the table section follows) --
//     -- version 3, and 4 to 6 with has_table: the table section (src/core/io/table_schema_codec.hpp) --
//     named u8; label column name, id column name (u32 length + bytes)
//     n_columns u32; per column { name, n_categories u32, categories }
//     has_fill u8; d × f32 missing-value fill means when has_fill
//     -- versions 4 to 6: the class weight (class_weight.hpp) --
//     mode u8 (1 balanced, 2 given; 0 none, versions 5 and 6); given: n u32, n × { u32 length,
//     bytes name, f64 weight }
//     -- version 6 on: filter_scoring u8 (1 relative; versions before 6 are absolute) --
//     -- version 7 on: pairs u32 (> 0 in version 7, written with pairs only) --
//     -- version 8 on: paper_half_min_columns u32 (> 0 in version 8) --
//     -- version 9: value_transform u8 (1 sqrt, 2 log1p; written with a transform only) --
//     -- version 10: filter_scoring u8, pairs u32, paper_half_min_columns u32 and
//        value_transform u8 (0 none) for every model, then the calibration (calibration.hpp):
//        prior weight f64 (≥ 0), source u8 (0 default, 1 leave-one-out, 2 given, 3 public),
//        rows u64 (rows the fit scored); then the missing-value policy u8 (0 not recorded,
//        1 error, 2 mean, 3 zero); the temperature is the version-2 field --
//     -- every version: --
//     n_classes L               u32
//     L × { u32 length, bytes } class names (UTF-8)
//     L × u64                   training rows per class
//     counts_encoding           u8   (1: LEB128 varints, class-major, zlib-deflated)
//     raw_length                u64  bytes of the varint stream
//     packed_length             u64  bytes of the deflated stream that follows
//     packed bytes
//   crc32        u32      CRC-32 (zlib) of everything before it
//
// The lifting matrix is not stored: it is rebuilt from (seed, m, s, d', hash_version, and
// the variant's signed-lifting and paper-half flags). A paper-variant model without a set
// temperature is written as version 1, byte for byte as before variants existed; a model
// without a table schema (positional data) is never written as version 3, and only a model
// with class weights (and no anchor units) is written as version 4, only a model with
// anchor units as version 5, and every model with relative scoring (the default of every
// variant but paper) as version 6.
// Counts are mostly 0, 1, 2, so varints + deflate make the file a small fraction of the
// raw L·m·4 bytes. The same model always serialises to the same bytes. The
// deflate stream is written by flynn's own run-length encoder (src/core/io/counts_deflate.hpp:
// one fixed-Huffman block, runs as distance-1 matches), for saving speed: a 2500-class
// model saves in a fraction of a second instead of 20 s at zlib level 9, for a somewhat
// larger file. Files written before (zlib level 9) still read, and both decompress to the
// same varint stream: only the compressed bytes differ.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flynn/classifier.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/model_footprint.hpp"

namespace flynn::io {

inline constexpr std::uint32_t kModelFormatVersion = 10;  ///< the newest version this build reads; written with a calibration or a missing-value policy
inline constexpr std::uint32_t kValueTransformModelFormatVersion = 9;  ///< written with a value transform, without a calibration
inline constexpr std::uint32_t kPaperHalfRuleModelFormatVersion = 8;  ///< written with paper_half_min_columns, without a value transform
inline constexpr std::uint32_t kPairsModelFormatVersion = 7;  ///< written with pairs, without paper_half_min_columns
inline constexpr std::uint32_t kRelativeModelFormatVersion = 6;  ///< written with relative scoring, without pairs
inline constexpr std::uint32_t kAnchorModelFormatVersion = 5;  ///< written with anchor units, absolute scoring
inline constexpr std::uint32_t kClassWeightModelFormatVersion = 4;  ///< written with class weights, without anchor units
inline constexpr std::uint32_t kTableModelFormatVersion = 3;  ///< written with a table, without class weights
inline constexpr std::uint32_t kVariantModelFormatVersion = 2;  ///< written without a table
inline constexpr std::uint32_t kPaperModelFormatVersion = 1;  ///< written for paper models
inline constexpr std::uint8_t kHashVersion = 1;

/// Everything a model file holds, before the lifting matrix is rebuilt.
struct ModelContents {
  FlyConfig config;
  LabelSet labels;
  ClassCounts counts;
  Provenance provenance;
  FeatureStats stats;         ///< standardising variants only
  Calibration calibration;    ///< Calibration{} when the file sets none
  std::optional<MissingPolicy> missing_policy;  ///< when the file records one (version 10)
  TableSchema schema;         ///< the table section (version 3 files; else empty)
  std::uint32_t format_version = 0;  ///< the version the file was written in, not the newest
};

/// The memory a model file may make its reader spend. Once the header is read,
/// and before the counts are inflated or anything is built, the model's estimated footprint
/// for `use` (model_footprint.hpp) must be within `bytes`, else flynn::Error names the
/// estimate, its parts and the limit. The estimate counts one thread's scratch (and, for
/// ModelUse::Train, one count accumulator): every use needs them whatever the data, while
/// each further thread takes its share only when the data gives it rows (1024 per task),
/// so what the thread count adds grows with the data (bounded by its own limit and the
/// resolve_threads cap), not with what the file claims.
struct ModelMemoryLimit {
  std::uint64_t bytes = 0;           ///< 0: default_model_memory_limit(the file's size)
  ModelUse use = ModelUse::Predict;  ///< what the caller builds from the model
};

/// The file's bytes for a model.
std::string serialize_model(const FlyNN& model);
/// Parses and verifies a model file's bytes (magic, version, lengths, checksum, field
/// ranges, count consistency). Throws flynn::Error naming `source` and the problem:
/// "not a flynn model file", "truncated", "format version 2 is newer than …",
/// "checksum mismatch", … Bounds: DP metadata must be possible (epsilon finite
/// and > 0, T >= 1, parties >= 1); without DP, rows × rho must fit in 64 bits, no count may
/// exceed its class's row count and each class's counts sum to rows × rho. The count table
/// (L × m × 4 bytes) is estimated before it is allocated and must fit both
/// `max_input_bytes` and the machine's memory (the error names the estimate); the count
/// stream is decoded in pieces and checked in full before that allocation, so a small
/// damaged file never causes a large one. Then `memory` bounds everything the model will
/// need (ModelMemoryLimit), from the header alone, before the counts are inflated.
ModelContents parse_model(std::string_view bytes, const std::string& source,
                          std::uint64_t max_input_bytes = kDefaultMaxInputBytes,
                          const ModelMemoryLimit& memory = {});

/// Writes the model atomically (temp file + rename).
void save_model(const FlyNN& model, const std::string& path);
/// A model file's bytes, at most `max_input_bytes` of them (the file is never read past
/// the limit, so /dev/zero or an endless pipe is an error, not a hang). Throws flynn::Error
/// naming the file when it cannot be opened or read, is a directory, or is too large.
std::string read_model_file(const std::string& path,
                            std::uint64_t max_input_bytes = kDefaultMaxInputBytes);
/// Reads a model file and rebuilds the model (lifting matrix from the seed).
/// `max_input_bytes` bounds the file and its decoded counts, `memory` what the model will
/// need (see parse_model).
FlyNN load_model(const std::string& path, int threads = 0,
                 std::uint64_t max_input_bytes = kDefaultMaxInputBytes,
                 const ModelMemoryLimit& memory = {});
/// The model a model file's bytes describe (the in-memory inverse of serialize_model, e.g.
/// for pickling): parse_model, then the model rebuilt exactly as load_model does. Throws
/// flynn::Error naming `source` and the problem, also when the model's estimated memory is
/// above `memory`'s limit (the message names the estimate).
FlyNN deserialize_model(std::string_view bytes, const std::string& source, int threads = 0,
                        std::uint64_t max_input_bytes = kDefaultMaxInputBytes,
                        const ModelMemoryLimit& memory = {});

/// CRC-32 of the file as stored in its last 4 bytes, for display ("info").
std::uint32_t model_checksum(std::string_view bytes);

}  // namespace flynn::io
