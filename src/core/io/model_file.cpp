#include "flynn/io/model_file.hpp"

#include <zlib.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "core/io/byte_codec.hpp"
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

std::string encode_counts(const ClassCounts& counts) {
  std::string raw;
  raw.reserve(counts.values().size() + 64);
  for (std::uint32_t v : counts.values()) {
    while (v >= 0x80) {
      raw.push_back(static_cast<char>((v & 0x7F) | 0x80));
      v >>= 7;
    }
    raw.push_back(static_cast<char>(v));
  }
  return raw;
}

std::string deflate_bytes(const std::string& raw) {
  uLongf bound = compressBound(static_cast<uLong>(raw.size()));
  std::string packed(bound, '\0');
  const int rc = compress2(reinterpret_cast<Bytef*>(packed.data()), &bound,
                           reinterpret_cast<const Bytef*>(raw.data()),
                           static_cast<uLong>(raw.size()), 9);
  if (rc != Z_OK) throw Error("cannot compress model counts (zlib error)");
  packed.resize(bound);
  return packed;
}

}  // namespace

std::string serialize_model(const FlyNN& model) {
  const FlyConfig& c = model.config();
  const Provenance& p = model.provenance();
  ByteWriter body;
  body.u32(c.input_dim);
  body.u32(c.m);
  body.u32(c.s);
  body.u32(c.rho);
  body.f64(c.gamma);
  body.u64(c.seed);
  body.u8(static_cast<std::uint8_t>(c.preprocess));
  body.u8(kHashVersion);
  body.u16(p.differentially_private ? 1 : 0);
  body.f64(p.differentially_private ? p.epsilon : 0.0);
  body.u32(p.differentially_private ? p.dp_T : 0);
  body.u32(p.differentially_private ? p.dp_parties : 0);
  const bool version3 = !model.table_schema().empty();
  const bool version2 = version3 || !c.variant.is_paper() || model.has_temperature();
  if (version2) {
    body.u8(static_cast<std::uint8_t>((c.variant.standardize ? 1 : 0) |
                                      (c.variant.signed_lifting ? 2 : 0) |
                                      (c.variant.paper_half ? 4 : 0)));
    body.u16(static_cast<std::uint16_t>(c.variant.thermometer));
    body.u16(static_cast<std::uint16_t>(c.variant.quantize));
    body.f64(model.has_temperature() ? model.temperature() : 0.0);
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
    if (version3) detail::write_table_schema(body, model.table_schema());
  }
  const LabelSet& labels = model.labels();
  body.u32(static_cast<std::uint32_t>(labels.size()));
  for (const std::string& name : labels.names()) {
    body.u32(static_cast<std::uint32_t>(name.size()));
    body.bytes(name);
  }
  for (std::uint64_t r : model.counts().rows_per_class()) body.u64(r);
  const std::string raw = encode_counts(model.counts());
  const std::string packed = deflate_bytes(raw);
  body.u8(kCountsVarintDeflate);
  body.u64(raw.size());
  body.u64(packed.size());
  body.bytes(packed);

  ByteWriter file;
  file.bytes(std::string_view(kMagic, sizeof kMagic));
  file.u32(version3   ? kModelFormatVersion
            : version2 ? kVariantModelFormatVersion
                       : kPaperModelFormatVersion);
  file.u64(body.data().size());
  file.bytes(body.data());
  file.u32(crc32_of(file.data()));
  return std::move(file.data());
}

ModelContents parse_model(std::string_view bytes, const std::string& source) {
  ByteReader r(bytes, [&source](const std::string& msg) {
    throw Error(fmt::format("{}: {}", source, msg));
  });
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
  if (stored_crc != crc32_of(bytes.substr(0, crc_at)))
    r.fail("checksum mismatch: the model file is corrupted");

  ModelContents mc;
  FlyConfig& c = mc.config;
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
  const std::uint16_t flags = r.u16("flags");
  if (flags > 1) r.fail(fmt::format("unknown flags {:#x}", flags));
  mc.provenance.differentially_private = flags & 1;
  mc.provenance.epsilon = r.f64("dp epsilon");
  mc.provenance.dp_T = r.u32("dp T");
  mc.provenance.dp_parties = r.u32("dp parties");
  if (!mc.provenance.differentially_private &&
      (mc.provenance.epsilon != 0.0 || mc.provenance.dp_T != 0 || mc.provenance.dp_parties != 0))
    r.fail("privacy fields are set on a model that is not marked differentially private");
  if (version >= 2) {
    const std::uint8_t vflags = r.u8("variant flags");
    if (vflags > 7) r.fail(fmt::format("unknown variant flags {:#x}", vflags));
    c.variant.standardize = vflags & 1;
    c.variant.signed_lifting = vflags & 2;
    c.variant.paper_half = vflags & 4;
    c.variant.thermometer = r.u16("thermometer levels");
    c.variant.quantize = r.u16("quantize steps");
    const double t = r.f64("temperature");
    if (t != 0.0) {
      if (!(t > 0.0) || !std::isfinite(t))
        r.fail(fmt::format("temperature {} is neither 0 (not set) nor a finite positive number", t));
      mc.temperature = t;
    }
    const std::uint8_t has_stats = r.u8("feature statistics flag");
    if (has_stats != (c.variant.standardize ? 1 : 0))
      r.fail(fmt::format("feature statistics flag {} does not match the variant", has_stats));
    if (has_stats) {
      if (c.input_dim > r.remaining() / 8) r.fail("truncated model file (feature statistics)");
      mc.stats.mean.resize(c.input_dim);
      mc.stats.scale.resize(c.input_dim);
      for (std::uint32_t j = 0; j < c.input_dim; ++j) {
        mc.stats.mean[j] = r.f32("feature mean");
        mc.stats.scale[j] = r.f32("feature scale");
        if (!std::isfinite(mc.stats.mean[j]) || !(mc.stats.scale[j] > 0.0f) ||
            !std::isfinite(mc.stats.scale[j]))
          r.fail(fmt::format("feature {} has invalid statistics (mean {}, scale {})", j,
                             mc.stats.mean[j], mc.stats.scale[j]));
      }
    }
  }
  try {
    c.validate();
  } catch (const Error& e) {
    r.fail(fmt::format("invalid configuration: {}", e.what()));
  }
  if (version >= 3) mc.schema = detail::read_table_schema(r, c.input_dim);
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

  const std::uint8_t encoding = r.u8("counts encoding");
  if (encoding != kCountsVarintDeflate) r.fail(fmt::format("unknown counts encoding {}", encoding));
  const std::uint64_t raw_length = r.u64("counts length");
  const std::uint64_t packed_length = r.u64("packed counts length");
  if (packed_length != r.remaining() - 4)
    r.fail(fmt::format("packed counts are {} bytes, {} remain", packed_length, r.remaining() - 4));
  const std::uint64_t cells = std::uint64_t(L) * c.m;
  if (raw_length < cells || raw_length > cells * 5 ||
      raw_length > packed_length * kMaxDeflateRatio + 64)
    r.fail(fmt::format("counts length {} is inconsistent with {} classes × m = {}", raw_length,
                       L, c.m));
  const std::string_view packed = r.bytes(packed_length, "packed counts");
  std::string raw(raw_length, '\0');
  uLongf out_len = static_cast<uLongf>(raw_length);
  const int rc = uncompress(reinterpret_cast<Bytef*>(raw.data()), &out_len,
                            reinterpret_cast<const Bytef*>(packed.data()),
                            static_cast<uLong>(packed.size()));
  if (rc != Z_OK || out_len != raw_length) r.fail("corrupted counts (inflate failed)");

  ClassCounts counts(L, c.m);
  std::size_t pos = 0;
  for (std::uint32_t& v : counts.values()) {
    std::uint64_t x = 0;
    int shift = 0;
    for (;;) {
      if (pos >= raw.size()) r.fail("corrupted counts (varint stream too short)");
      const auto byte = static_cast<unsigned char>(raw[pos++]);
      x |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) break;
      shift += 7;
      if (shift > 28) r.fail("corrupted counts (varint too long)");
    }
    if (x > std::numeric_limits<std::uint32_t>::max()) r.fail("corrupted counts (value too large)");
    v = static_cast<std::uint32_t>(x);
  }
  if (pos != raw.size()) r.fail("corrupted counts (trailing bytes)");
  counts.rows_per_class() = rows;
  if (!mc.provenance.differentially_private) {
    // Every training row adds exactly rho ones to its class: a strong consistency check.
    for (std::uint32_t l = 0; l < L; ++l) {
      std::uint64_t total = 0;
      const std::uint32_t* cl = counts.of_class(l);
      for (std::uint32_t i = 0; i < c.m; ++i) total += cl[i];
      if (total != rows[l] * c.rho)
        r.fail(fmt::format("class '{}' counts sum to {}, expected rows × rho = {} × {}",
                           mc.labels.name(l), total, rows[l], c.rho));
    }
  }
  mc.counts = std::move(counts);
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

FlyNN load_model(const std::string& path, int threads) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("{}: cannot open model file", path));
  std::ostringstream ss;
  ss << f.rdbuf();
  return deserialize_model(ss.str(), path, threads);
}

FlyNN deserialize_model(std::string_view bytes, const std::string& source, int threads) {
  ModelContents mc = parse_model(bytes, source);
  mc.config.validate();  // no memory guard: a model must load
  FlyNN model(mc.config, std::move(mc.labels), std::move(mc.counts), threads);
  model.set_provenance(mc.provenance);
  model.set_feature_stats(std::move(mc.stats));
  if (mc.temperature) model.set_temperature(*mc.temperature);
  model.set_table_schema(std::move(mc.schema));
  return model;
}

}  // namespace flynn::io
