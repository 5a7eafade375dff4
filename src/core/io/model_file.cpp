#include "flynn/io/model_file.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/io/atomic_file.hpp"
#include "flynn/detail/memory.hpp"
#include "core/io/byte_codec.hpp"
#include "core/io/counts_deflate.hpp"
#include "core/io/table_schema_codec.hpp"

namespace flynn::io {

namespace {

constexpr char kMagic[8] = {'F', 'L', 'Y', 'N', 'N', 'M', 'D', 'L'};
constexpr std::uint8_t kCountsVarintDeflate = 1;
constexpr std::uint32_t kMaxClasses = 1u << 20;
constexpr std::uint32_t kMaxLabelBytes = LabelSet::kMaxNameBytes;
// zlib's deflate cannot compress better than about 1032:1.
constexpr std::uint64_t kMaxDeflateRatio = 1040;

std::uint32_t crc32_of(std::string_view b) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large buffers in pieces.
  std::size_t pos = 0;
  while (pos < b.size()) {
    const std::size_t n = std::min<std::size_t>(b.size() - pos, 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(b.data() + pos), static_cast<uInt>(n));
    pos += n;
  }
  return static_cast<std::uint32_t>(crc);
}


// Inflates the packed counts in 64 KiB pieces and decodes their LEB128 varints, calling
// sink(cell, value) for each of the `cells` values in order. Streaming keeps the varint
// stream (up to 5 bytes per cell) out of memory. Fails through `r` on a corrupt deflate
// stream, a stream whose length is not `raw_length`, a varint above 32 bits, or a count of
// values other than `cells`.
template <typename Sink>
void decode_counts(std::string_view packed, std::uint64_t raw_length, std::uint64_t cells,
                   ByteReader& r, Sink&& sink) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) r.fail("cannot initialise zlib");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&zs};
  std::size_t in_pos = 0;
  std::uint64_t produced = 0, cell = 0, value = 0;
  int shift = 0;
  unsigned char out[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (zs.avail_in == 0 && in_pos < packed.size()) {
      const std::size_t chunk = std::min<std::size_t>(packed.size() - in_pos, 1u << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data() + in_pos));
      zs.avail_in = static_cast<uInt>(chunk);
      in_pos += chunk;
    }
    zs.next_out = out;
    zs.avail_out = sizeof out;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && !(rc == Z_BUF_ERROR && zs.avail_out == 0))
      r.fail("corrupted counts (inflate failed)");
    const std::size_t n = sizeof out - zs.avail_out;
    if (rc == Z_OK && n == 0 && zs.avail_in == 0 && in_pos == packed.size())
      r.fail("corrupted counts (inflate failed: the stream is truncated)");
    produced += n;
    if (produced > raw_length) r.fail("corrupted counts (longer than the stated length)");
    for (std::size_t i = 0; i < n; ++i) {
      value |= static_cast<std::uint64_t>(out[i] & 0x7F) << shift;
      if (out[i] & 0x80) {
        shift += 7;
        if (shift > 28) r.fail("corrupted counts (varint too long)");
        continue;
      }
      if (value > std::numeric_limits<std::uint32_t>::max())
        r.fail("corrupted counts (value too large)");
      if (cell == cells) r.fail("corrupted counts (trailing bytes)");
      sink(cell++, static_cast<std::uint32_t>(value));
      value = 0;
      shift = 0;
    }
  }
  if (zs.avail_in != 0 || in_pos != packed.size())
    r.fail("corrupted counts (bytes after the deflate stream)");
  if (produced != raw_length) r.fail("corrupted counts (inflate failed)");
  if (shift != 0 || cell != cells) r.fail("corrupted counts (varint stream too short)");
}

// ---- sections, in file order: write_X writes what read_X reads ---------------------------
// Every field is checked as it is read, with an error naming it (through the reader).

void write_config(ByteWriter& body, const FlyConfig& c) {
  body.u32(c.input_dim);
  body.u32(c.m);
  body.u32(c.s);
  body.u32(c.rho);
  body.f64(c.gamma);
  body.u64(c.seed);
  body.u8(static_cast<std::uint8_t>(c.preprocess));
  body.u8(kHashVersion);
}

// The configuration's fields (validated as a whole once the variant is read too).
void read_config(ByteReader& r, FlyConfig& c) {
  c.input_dim = r.u32("d");
  c.m = r.u32("m");
  c.s = r.u32("s");
  c.rho = r.u32("rho");
  c.gamma = r.f64("gamma");
  c.seed = r.u64("seed");
  const std::uint8_t pre = r.u8("preprocess");
  if (pre > 2) r.fail(fmt::format("unknown preprocess code {}", pre));
  c.preprocess = static_cast<Preprocess>(pre);
  const std::uint8_t hash_version = r.u8("hash version");
  if (hash_version != kHashVersion)
    r.fail(fmt::format("hash version {} is not supported (this flynn implements {})",
                       hash_version, kHashVersion));
}

void write_provenance(ByteWriter& body, const Provenance& p) {
  body.u16(p.differentially_private ? 1 : 0);
  body.f64(p.differentially_private ? p.epsilon : 0.0);
  body.u32(p.differentially_private ? p.dp_T : 0);
  body.u32(p.differentially_private ? p.dp_parties : 0);
}

Provenance read_provenance(ByteReader& r) {
  Provenance p;
  const std::uint16_t flags = r.u16("flags");
  if (flags > 1) r.fail(fmt::format("unknown flags {:#x}", flags));
  p.differentially_private = flags & 1;
  p.epsilon = r.f64("dp epsilon");
  p.dp_T = r.u32("dp T");
  p.dp_parties = r.u32("dp parties");
  if (!p.differentially_private && (p.epsilon != 0.0 || p.dp_T != 0 || p.dp_parties != 0))
    r.fail("privacy fields are set on a model that is not marked differentially private");
  if (p.differentially_private) {
    if (!std::isfinite(p.epsilon) || !(p.epsilon > 0.0))
      r.fail(fmt::format("dp epsilon {} is not a finite positive number", p.epsilon));
    if (p.dp_T < 1) r.fail("dp T is 0: a release has at least one entry per party");
    if (p.dp_parties < 1) r.fail("dp parties is 0: a release comes from at least one party");
  }
  return p;
}

// Version 2 on: the variant, the temperature and the standardising variants' statistics
// (the table schema, version 3, follows them).
void write_variant(ByteWriter& body, const FlyNN& model) {
  const FlyConfig& c = model.config();
  body.u8(static_cast<std::uint8_t>((c.variant.standardize ? 1 : 0) |
                                    (c.variant.signed_lifting ? 2 : 0) |
                                    (c.variant.paper_half ? 4 : 0) |
                                    (c.variant.anchors ? 8 : 0)));
  // One levels field: anchors and thermometer exclude each other (bit 3 says which).
  body.u16(static_cast<std::uint16_t>(c.variant.anchors ? c.variant.anchors : c.variant.thermometer));
  body.u16(static_cast<std::uint16_t>(c.variant.quantize));
  body.f64(model.calibration().source != CalibrationSource::Default ? model.temperature() : 0.0);
  const FeatureStats& st = model.feature_stats();
  const bool has_stats = c.variant.standardize;
  if (has_stats && (st.mean.size() != c.input_dim || st.scale.size() != c.input_dim))
    throw Error(fmt::format("cannot save a {} model without feature statistics (train it "
                            "first)", variant_name(c.variant)));
  body.u8(has_stats ? 1 : 0);
  if (has_stats) {
    for (std::uint32_t j = 0; j < c.input_dim; ++j) {
      body.f32(st.mean[j]);
      body.f32(st.scale[j]);
    }
  }
}

void read_feature_stats(ByteReader& r, std::uint32_t d, FeatureStats& stats) {
  if (d > r.remaining() / 8) r.fail("truncated model file (feature statistics)");
  stats.mean.resize(d);
  stats.scale.resize(d);
  for (std::uint32_t j = 0; j < d; ++j) {
    stats.mean[j] = r.f32("feature mean");
    stats.scale[j] = r.f32("feature scale");
    if (!std::isfinite(stats.mean[j]) || !(stats.scale[j] > 0.0f) || !std::isfinite(stats.scale[j]))
      r.fail(fmt::format("feature {} has invalid statistics (mean {}, scale {})", j,
                         stats.mean[j], stats.scale[j]));
  }
}

void read_variant(ByteReader& r, ModelContents& mc, std::uint32_t version) {
  FlyConfig& c = mc.config;
  const std::uint8_t vflags = r.u8("variant flags");
  if (vflags > (version >= 5 ? 15 : 7)) r.fail(fmt::format("unknown variant flags {:#x}", vflags));
  c.variant.standardize = vflags & 1;
  c.variant.signed_lifting = vflags & 2;
  c.variant.paper_half = vflags & 4;
  (vflags & 8 ? c.variant.anchors : c.variant.thermometer) = r.u16("levels per feature");
  c.variant.quantize = r.u16("quantize steps");
  const double t = r.f64("temperature");
  if (t != 0.0) {
    if (!(t > 0.0) || !std::isfinite(t))
      r.fail(fmt::format("temperature {} is neither 0 (not set) nor a finite positive number", t));
    // Before version 10 a stored temperature was set by tune, and the probabilities were
    // the softmax times the class priors, with the lowest score as the decision. The
    // mixture of version 10 has no such form: the temperature is kept with the priors'
    // share 0, whose decisions are those files' (the score order). Version 10's
    // calibration section, read next, says more.
    mc.calibration = Calibration{t, 0.0, CalibrationSource::Given, 0};
  }
  const std::uint8_t has_stats = r.u8("feature statistics flag");
  if (has_stats != (c.variant.standardize ? 1 : 0))
    r.fail(fmt::format("feature statistics flag {} does not match the variant", has_stats));
  if (has_stats) read_feature_stats(r, c.input_dim, mc.stats);
}

// Version 4: the class weight (written only when not none, so other models keep their
// bytes): mode (1 balanced, 2 given), then for given the (class name, weight) pairs.
// Version 5 writes the section for every model, so its mode may also be 0 (none).
void write_class_weight(ByteWriter& body, const ClassWeight& cw) {
  body.u8(static_cast<std::uint8_t>(cw.mode));
  if (cw.mode != ClassWeight::Mode::Given) return;
  body.u32(static_cast<std::uint32_t>(cw.given.size()));
  for (const auto& [name, w] : cw.given) {
    body.u32(static_cast<std::uint32_t>(name.size()));
    body.bytes(name);
    body.f64(w);
  }
}

void read_class_weight(ByteReader& r, ClassWeight& cw, std::uint32_t version) {
  // Version 4 is written only for weighted models; version 5 (anchor units) for any.
  const std::uint8_t mode = r.u8("class weight mode");
  const std::uint8_t lowest = version >= 5 ? 0 : 1;
  if (mode < lowest || mode > 2)
    r.fail(fmt::format("class weight mode {} is not {}1 (balanced) or 2 (given)", mode,
                       lowest == 0 ? "0 (none), " : ""));
  cw.mode = static_cast<ClassWeight::Mode>(mode);
  if (cw.mode == ClassWeight::Mode::Given) {
    const std::uint32_t n = r.u32("class weight count");
    // Each pair takes at least 13 bytes: no allocation beyond what the file can hold.
    if (n == 0 || n > kMaxClasses || n > r.remaining() / 13) r.fail(fmt::format("invalid class weight count {}", n));
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t len = r.u32("class weight name length");
      if (len > kMaxLabelBytes) r.fail(fmt::format("class weight name {} is {} bytes long", i, len));
      std::string name(r.bytes(len, "class weight name"));
      cw.given.emplace_back(std::move(name), r.f64("class weight"));
    }
  }
  try {
    cw.validate();
  } catch (const Error& e) {
    r.fail(e.what());
  }
}

// Version 10: the calibration (its temperature is the version-2 field) and the
// missing-value policy the model was trained with.
constexpr std::uint8_t kNoMissingPolicy = 0;

std::uint8_t missing_policy_code(const std::optional<MissingPolicy>& p) {
  if (!p) return kNoMissingPolicy;
  switch (*p) {
    case MissingPolicy::Error: return 1;
    case MissingPolicy::Mean: return 2;
    case MissingPolicy::Zero: return 3;
  }
  return kNoMissingPolicy;
}

void write_calibration(ByteWriter& body, const FlyNN& model) {
  const Calibration& c = model.calibration();
  body.f64(c.prior_weight);
  body.u8(static_cast<std::uint8_t>(c.source));
  body.u64(c.rows);
  body.u8(missing_policy_code(model.missing_policy()));
}

void read_calibration(ByteReader& r, ModelContents& mc) {
  const double weight = r.f64("prior weight");
  const std::uint8_t source = r.u8("calibration source");
  const std::uint64_t rows = r.u64("calibration rows");
  if (source > static_cast<std::uint8_t>(CalibrationSource::Public))
    r.fail(fmt::format("calibration source {} is not 0 to 3", source));
  const bool set = mc.calibration.source != CalibrationSource::Default;  // the temperature field
  if (set != (source != 0))
    r.fail(fmt::format("calibration source {} does not match the temperature field", source));
  if (set) {
    Calibration c{mc.calibration.temperature, weight, static_cast<CalibrationSource>(source), rows};
    try {
      c.validate();
    } catch (const Error& e) {
      r.fail(e.what());
    }
    mc.calibration = c;
  } else if (weight != Defaults::prior_weight || rows != 0) {
    r.fail(fmt::format("a calibration that is not set has prior weight {} and no rows", Defaults::prior_weight));
  }
  const std::uint8_t missing = r.u8("missing-value policy");
  switch (missing) {
    case kNoMissingPolicy: break;
    case 1: mc.missing_policy = MissingPolicy::Error; break;
    case 2: mc.missing_policy = MissingPolicy::Mean; break;
    case 3: mc.missing_policy = MissingPolicy::Zero; break;
    default: r.fail(fmt::format("missing-value policy {} is not 0 to 3", missing));
  }
}

void write_labels(ByteWriter& body, const FlyNN& model) {
  const LabelSet& labels = model.labels();
  body.u32(static_cast<std::uint32_t>(labels.size()));
  for (const std::string& name : labels.names()) {
    body.u32(static_cast<std::uint32_t>(name.size()));
    body.bytes(name);
  }
  for (std::uint64_t r : model.counts().rows_per_class()) body.u64(r);
}

// The class names (into mc.labels) and the rows per class, returned.
std::vector<std::uint64_t> read_labels(ByteReader& r, ModelContents& mc) {
  const std::uint32_t L = r.u32("class count");
  if (L == 0 || L > kMaxClasses) r.fail(fmt::format("invalid class count {}", L));
  if (L > r.remaining() / 4) r.fail("truncated model file (class names)");
  std::vector<std::string> names;
  names.reserve(L);
  for (std::uint32_t l = 0; l < L; ++l) {
    const std::uint32_t len = r.u32("class name length");
    if (len > kMaxLabelBytes) r.fail(fmt::format("class name {} is {} bytes long", l, len));
    names.emplace_back(r.bytes(len, "class name"));
  }
  try {
    mc.labels = LabelSet(std::move(names));
  } catch (const Error& e) {
    r.fail(e.what());
  }
  std::vector<std::uint64_t> rows(L);
  for (auto& v : rows) v = r.u64("rows per class");
  if (!mc.provenance.differentially_private) {
    // Every training row adds exactly codes_per_row ones (rho winners, and its pair cells)
    // to its class, checked below as a sum of 64-bit counts: a row count whose rows ×
    // codes_per_row does not fit cannot be consistent.
    const std::uint64_t per_row = mc.config.codes_per_row();
    for (std::uint32_t l = 0; l < L; ++l)
      if (rows[l] > std::numeric_limits<std::uint64_t>::max() / per_row)
        r.fail(fmt::format("class '{}' has {} rows: rows × codes per row = {} × {} overflows",
                           mc.labels.name(l), rows[l], rows[l], per_row));
  }
  return rows;
}

void write_counts(ByteWriter& body, const ClassCounts& counts) {
  std::uint64_t raw_length = 0;
  const std::string packed = detail::deflate_counts(counts, raw_length);
  body.u8(kCountsVarintDeflate);
  body.u64(raw_length);
  body.u64(packed.size());
  body.bytes(packed);
}

// Where the model file comes from, for the limits read_counts checks before allocating.
struct ModelSource {
  const std::string& name;
  std::uint64_t file_bytes;
  std::uint64_t max_input_bytes;
  const ModelMemoryLimit& memory;
};

// The counts section's header: the encoding and lengths, checked against the classes ×
// m cells, and the memory the model will need, bounded before anything is allocated.
// Returns the raw (inflated) and the packed length.
struct CountsLengths {
  std::uint64_t raw, packed;
};
CountsLengths read_counts_header(ByteReader& r, const ModelContents& mc, const ModelSource& src) {
  const FlyConfig& c = mc.config;
  const std::size_t L = mc.labels.size();
  const std::uint8_t encoding = r.u8("counts encoding");
  if (encoding != kCountsVarintDeflate) r.fail(fmt::format("unknown counts encoding {}", encoding));
  const std::uint64_t raw_length = r.u64("counts length");
  const std::uint64_t packed_length = r.u64("packed counts length");
  if (packed_length != r.remaining() - 4)
    r.fail(fmt::format("packed counts are {} bytes, {} remain", packed_length, r.remaining() - 4));
  const std::uint64_t cells = std::uint64_t(L) * c.cells();
  if (raw_length < cells || raw_length > cells * 5 ||
      raw_length > packed_length * kMaxDeflateRatio + 64)
    r.fail(fmt::format("counts length {} is inconsistent with {} classes × {} cells", raw_length,
                       L, c.cells()));
  // The one large allocation: L × m 32-bit counts. Estimated and bounded before it is made
  // (the decompressed-input limit, and the machine's memory).
  const std::uint64_t counts_bytes = cells * sizeof(std::uint32_t);
  if (counts_bytes > src.max_input_bytes)
    r.fail(fmt::format("{} classes × {} cells of counts need {} bytes ({:.1f} GiB) in memory, more "
                       "than the input size limit of {} bytes (--max-input-bytes)",
                       L, c.cells(), counts_bytes, counts_bytes / double(1ULL << 30), src.max_input_bytes));
  if (counts_bytes > flynn::detail::physical_memory_bytes())
    r.fail(fmt::format("{} classes × {} cells of counts need {} bytes ({:.1f} GiB) in memory, more "
                       "than this machine's {:.1f} GiB",
                       L, c.cells(), counts_bytes, counts_bytes / double(1ULL << 30),
                       flynn::detail::physical_memory_bytes() / double(1ULL << 30)));
  // What the caller will build from the model (the counts; to predict or train also the
  // score table or accumulators, the lifting matrix, scratch, ...), estimated from the header
  // alone before any of it is built: a small file that declares a huge m ends here, in
  // microseconds (model_footprint.hpp explains the default limit).
  check_model_footprint(model_footprint(c, L, src.memory.use, 1), src.memory.use,
                        src.memory.bytes, src.file_bytes, src.name);
  return {raw_length, packed_length};
}

// The counts (into mc.counts), each checked against its class's rows as it decodes.
void read_counts(ByteReader& r, ModelContents& mc, std::vector<std::uint64_t> rows,
                 const ModelSource& src) {
  const FlyConfig& c = mc.config;
  const std::size_t L = mc.labels.size();
  const CountsLengths lengths = read_counts_header(r, mc, src);
  const std::uint32_t width = c.cells();
  const std::uint64_t cells = std::uint64_t(L) * width;
  const std::string_view packed = r.bytes(lengths.packed, "packed counts");
  const bool dp = mc.provenance.differentially_private;
  // One pass: the table is reserved (address space, no pages touched) and filled as the
  // stream decodes, so memory in use grows only with counts that decoded and passed
  // their checks; a stream that goes wrong early costs little.
  std::vector<std::uint64_t> sums(L, 0);
  std::vector<std::uint32_t> values;
  values.reserve(cells);
  decode_counts(packed, lengths.raw, cells, r, [&](std::uint64_t cell, std::uint32_t v) {
    const std::uint64_t l = cell / width;
    // A row adds at most one to each cell of its class (its rho winners are distinct, and
    // so are its pair cells), so no count exceeds its class's row count. DP counts are
    // noisy releases: no bound.
    if (!dp && v > rows[l])
      r.fail(fmt::format("class '{}' has a count of {} at cell {}, more than its {} rows",
                         mc.labels.name(l), v, cell % width, rows[l]));
    sums[l] += v;
    values.push_back(v);
  });
  if (!dp) {
    for (std::uint32_t l = 0; l < L; ++l)
      if (sums[l] != rows[l] * c.codes_per_row())
        r.fail(fmt::format("class '{}' counts sum to {}, expected rows × codes per row = {} × {}",
                           mc.labels.name(l), sums[l], rows[l], c.codes_per_row()));
  }
  ClassCounts counts(L, width, std::move(values));
  counts.rows_per_class() = std::move(rows);
  mc.counts = std::move(counts);
}

// The envelope: magic, format version, body length, the body, its CRC-32.
std::string write_envelope(std::uint32_t version, std::string_view body) {
  ByteWriter file;
  file.bytes(std::string_view(kMagic, sizeof kMagic));
  file.u32(version);
  file.u64(body.size());
  file.bytes(body);
  file.u32(crc32_of(file.data()));
  return std::move(file.data());
}

// Checks the envelope and leaves `r` at the body; returns the format version.
std::uint32_t read_envelope(ByteReader& r, std::string_view bytes) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    r.fail("not a flynn model file (bad magic bytes)");
  r.bytes(sizeof kMagic, "magic");
  const std::uint32_t version = r.u32("format version");
  if (version == 0 || version > kModelFormatVersion)
    r.fail(fmt::format("model format version {} is not supported: this flynn reads version {}{}",
                       version, kModelFormatVersion,
                       version > kModelFormatVersion ? " (the file is from a newer flynn)" : ""));
  const std::uint64_t body_length = r.u64("body length");
  if (body_length > r.remaining() || r.remaining() - body_length < 4)
    r.fail(fmt::format("truncated model file ({} bytes, header says {})", bytes.size(),
                       20 + body_length + 4));
  if (r.remaining() - body_length > 4)
    r.fail(fmt::format("{} unexpected bytes after the model", r.remaining() - body_length - 4));
  const std::size_t crc_at = bytes.size() - 4;
  std::uint32_t stored_crc = 0;
  for (int i = 0; i < 4; ++i)
    stored_crc |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[crc_at + i]))
                  << (8 * i);
#ifndef FLYNN_FUZZ_SKIP_MODEL_CRC
  if (stored_crc != crc32_of(bytes.substr(0, crc_at)))
    r.fail("checksum mismatch: the model file is corrupted");
#else
  // Fuzz builds only (fuzz/CMakeLists.txt): a mutated body almost never carries a valid
  // CRC, so checking it would stop the fuzzer at the checksum instead of the fields below.
  (void)stored_crc;
#endif
  return version;
}

}  // namespace

std::string serialize_model(const FlyNN& model) {
  const FlyConfig& c = model.config();
  ByteWriter body;
  write_config(body, c);
  write_provenance(body, model.provenance());
  const bool version10 = model.calibration().source != CalibrationSource::Default || model.missing_policy();
  const bool version9 = version10 || c.value_transform != ValueTransform::None;
  const bool version8 = version9 || c.paper_half_min_columns != 0;
  const bool version7 = version8 || c.pairs != 0;
  const bool version6 = version7 || c.filter_scoring != FilterScoring::Absolute;
  const bool version5 = version6 || c.variant.anchors != 0;
  const bool version4 = version5 || !c.class_weight.is_none();
  const bool version3 = version4 || !model.table_schema().empty();
  const bool version2 = version3 || !c.variant.is_paper() || model.has_temperature();
  if (version2) write_variant(body, model);
  if (version4) body.u8(model.table_schema().empty() ? 0 : 1);
  if (version3 && !model.table_schema().empty()) detail::write_table_schema(body, model.table_schema());
  if (version4) write_class_weight(body, c.class_weight);
  if (version6) body.u8(static_cast<std::uint8_t>(c.filter_scoring));
  if (version7) body.u32(c.pairs);
  if (version8) body.u32(c.paper_half_min_columns);
  if (version9) body.u8(static_cast<std::uint8_t>(c.value_transform));
  if (version10) write_calibration(body, model);
  write_labels(body, model);
  write_counts(body, model.counts());
  return write_envelope(version10  ? kModelFormatVersion
                        : version9 ? kValueTransformModelFormatVersion
                        : version8 ? kPaperHalfRuleModelFormatVersion
                        : version7 ? kPairsModelFormatVersion
                        : version6 ? kRelativeModelFormatVersion
                        : version5 ? kAnchorModelFormatVersion
                        : version4 ? kClassWeightModelFormatVersion
                        : version3 ? kTableModelFormatVersion
                        : version2 ? kVariantModelFormatVersion
                                   : kPaperModelFormatVersion,
                        body.data());
}

ModelContents parse_model(std::string_view bytes, const std::string& source,
                          std::uint64_t max_input_bytes, const ModelMemoryLimit& memory) {
  ByteReader r(bytes, [&source](const std::string& msg) {
    throw Error(fmt::format("{}: {}", source, msg));
  });
  const std::uint32_t version = read_envelope(r, bytes);
  ModelContents mc;
  mc.format_version = version;
  read_config(r, mc.config);
  mc.provenance = read_provenance(r);
  if (version >= 2) read_variant(r, mc, version);
  try {
    mc.config.validate();
  } catch (const Error& e) {
    r.fail(fmt::format("invalid configuration: {}", e.what()));
  }
  bool has_schema = version == 3;
  if (version >= 4) {
    const std::uint8_t flag = r.u8("table schema flag");
    if (flag > 1) r.fail(fmt::format("table schema flag {} is not 0 or 1", flag));
    has_schema = flag == 1;
  }
  if (has_schema) mc.schema = detail::read_table_schema(r, mc.config.input_dim);
  if (version >= 4) read_class_weight(r, mc.config.class_weight, version);
  if (version >= 6) {
    // Version 6 is written only for relative scoring; version 7 (pairs) for either.
    const std::uint8_t scoring = r.u8("filter scoring");
    if (scoring > 1 || (version == 6 && scoring != 1))
      r.fail(fmt::format("filter scoring {} is not {}", scoring, version == 6 ? "1 (relative)" : "0 or 1"));
    mc.config.filter_scoring = static_cast<FilterScoring>(scoring);
  }
  if (version >= 7) {
    // Version 7 is written only with pairs; version 8 (paper_half_min_columns) with any.
    mc.config.pairs = r.u32("pairs");
    if (version == 7 && mc.config.pairs == 0) r.fail("pairs 0 in a version 7 model (written only with pairs)");
    if (version >= 8) {
      mc.config.paper_half_min_columns = r.u32("paper_half_min_columns");
      if (version == 8 && mc.config.paper_half_min_columns == 0)
        r.fail("paper_half_min_columns 0 in a version 8 model (written only with it)");
    }
    if (version >= 9) {
      // Version 9 is written only with a value transform; version 10 with any.
      const std::uint8_t transform = r.u8("value transform");
      const std::uint8_t lowest = version >= 10 ? 0 : 1;
      if (transform < lowest || transform > 2)
        r.fail(fmt::format("value transform {} is not {}1 (sqrt) or 2 (log1p)", transform,
                           lowest == 0 ? "0 (none), " : ""));
      mc.config.value_transform = static_cast<ValueTransform>(transform);
    }
    if (version >= 10) read_calibration(r, mc);
    try {
      mc.config.validate();
    } catch (const Error& e) {
      r.fail(fmt::format("invalid configuration: {}", e.what()));
    }
  }
  std::vector<std::uint64_t> rows = read_labels(r, mc);
  read_counts(r, mc, std::move(rows), ModelSource{source, bytes.size(), max_input_bytes, memory});
  return mc;
}

std::uint32_t model_checksum(std::string_view bytes) {
  if (bytes.size() < 4) return 0;
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[bytes.size() - 4 + i]))
         << (8 * i);
  return v;
}

void save_model(const FlyNN& model, const std::string& path) {
  write_file_atomic(path, serialize_model(model));
}

std::string read_model_file(const std::string& path, std::uint64_t max_input_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
    return read_file_bytes(path, max_input_bytes);  // its size is known before reading
  // A pipe or a device: the header says how long the model is, so read that much (and one
  // byte more, for parse_model to report trailing bytes) rather than to the end, which
  // for /dev/zero never comes.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  constexpr std::size_t kHeader = sizeof kMagic + 4 + 8;
  std::string bytes(kHeader, '\0');
  bytes.resize(std::fread(bytes.data(), 1, kHeader, f.get()));
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return bytes;  // parse_model names the problem
  std::uint64_t body_length = 0;
  for (int i = 0; i < 8; ++i)
    body_length |= std::uint64_t(static_cast<unsigned char>(bytes[sizeof kMagic + 4 + i])) << (8 * i);
  if (body_length > max_input_bytes || kHeader + body_length + 4 > max_input_bytes)
    throw Error(fmt::format("{}: the header says the model holds {} bytes, more than {} bytes, "
                            "the input size limit", path, body_length, max_input_bytes));
  const std::size_t want = kHeader + body_length + 4 + 1;
  char buf[1 << 16];
  while (bytes.size() < want) {
    const std::size_t n = std::fread(buf, 1, std::min(sizeof buf, want - bytes.size()), f.get());
    if (n == 0) break;
    bytes.append(buf, n);
  }
  if (std::ferror(f.get())) throw Error(fmt::format("{}: read error: {}", path, std::strerror(errno)));
  return bytes;
}

FlyNN load_model(const std::string& path, int threads, std::uint64_t max_input_bytes,
                 const ModelMemoryLimit& memory) {
  return deserialize_model(read_model_file(path, max_input_bytes), path, threads,
                           max_input_bytes, memory);
}

FlyNN deserialize_model(std::string_view bytes, const std::string& source, int threads,
                        std::uint64_t max_input_bytes, const ModelMemoryLimit& memory) {
  ModelContents mc = parse_model(bytes, source, max_input_bytes, memory);
  // parse_model bounded what the model needs (ModelMemoryLimit); the guard of half the
  // machine applies where training and prediction allocate, not here: a model must load.
  mc.config.validate();
  FlyNN model(mc.config, std::move(mc.labels), std::move(mc.counts), threads);
  model.set_provenance(mc.provenance);
  model.set_feature_stats(std::move(mc.stats));
  model.set_calibration(mc.calibration);
  model.set_missing_policy(mc.missing_policy);
  model.set_table_schema(std::move(mc.schema));
  return model;
}

}  // namespace flynn::io
