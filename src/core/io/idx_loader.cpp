// IDX parser (MNIST / Fashion-MNIST family; see loaders.hpp and idx_images.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "core/io/idx_images.hpp"
#include "core/io/text_scanner.hpp"

namespace flynn::io {

namespace {

struct IdxHeader {
  std::uint8_t type = 0;
  std::size_t elem = 0;             // bytes per value
  std::vector<std::uint32_t> dims;  // dims[0] = records
  std::size_t header_bytes = 0;
  std::uint64_t per_record = 1;  // values per record (product of dims[1..])
};

std::size_t element_size(std::uint8_t type) {
  switch (type) {
    case 0x08:
    case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C:
    case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
  }
}

const char* type_name(std::uint8_t type) {
  switch (type) {
    case 0x08: return "uint8";
    case 0x09: return "int8";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return "unknown";
  }
}

std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 |
         std::uint32_t{p[3]};
}

std::string hex2(unsigned v) {
  static const char* d = "0123456789abcdef";
  std::string r = "0x";
  r += d[(v >> 4) & 15];
  r += d[v & 15];
  return r;
}

// Parses and validates the header, and checks the payload length against the file
// length exactly, before anything is allocated.
IdxHeader read_header(std::string_view bytes, const std::string& source) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.empty()) throw Error(source + ": empty file");
  if (bytes.size() < 4) {
    throw Error(source + ": truncated IDX header (" + std::to_string(bytes.size()) + " bytes)");
  }
  if (b[0] != 0 || b[1] != 0) {
    throw Error(source + ": not an IDX file (it must start with two zero bytes, found " +
                hex2(b[0]) + " " + hex2(b[1]) + ")");
  }
  IdxHeader h;
  h.type = b[2];
  h.elem = element_size(h.type);
  if (h.elem == 0) {
    throw Error(source + ": unsupported IDX element type " + hex2(h.type) +
                " (expected 0x08, 0x09, 0x0b, 0x0c, 0x0d or 0x0e)");
  }
  const unsigned ndims = b[3];
  if (ndims == 0) throw Error(source + ": IDX header with 0 dimensions");
  h.header_bytes = 4 + 4 * std::size_t{ndims};
  if (bytes.size() < h.header_bytes) {
    throw Error(source + ": truncated IDX header (" + std::to_string(ndims) + " dimensions need " +
                std::to_string(h.header_bytes) + " bytes, the file has " +
                std::to_string(bytes.size()) + ")");
  }
  h.dims.resize(ndims);
  for (unsigned k = 0; k < ndims; ++k) {
    h.dims[k] = be32(b + 4 + 4 * k);
    if (h.dims[k] == 0)
      throw Error(source + ": IDX dimension " + std::to_string(k + 1) + " is 0 (no data)");
  }
  const std::uint64_t payload = bytes.size() - h.header_bytes;
  // Values per record, then bytes per record, without overflow: stop as soon as the product
  // exceeds the payload (it then cannot fit, whatever the record count).
  std::uint64_t record_bytes = h.elem;
  bool too_big = false;
  for (unsigned k = 1; k < ndims; ++k) {
    if (__builtin_mul_overflow(record_bytes, std::uint64_t{h.dims[k]}, &record_bytes) ||
        record_bytes > payload) {
      too_big = true;
      break;
    }
    h.per_record *= h.dims[k];  // <= record_bytes: no overflow
  }
  std::string shape = std::to_string(h.dims[0]) + " records";
  if (ndims > 1) {
    shape += " of ";
    for (unsigned k = 1; k < ndims; ++k) {
      if (k > 1) shape += 'x';
      shape += std::to_string(h.dims[k]);
    }
  }
  shape += ' ';
  shape += type_name(h.type);
  if (too_big) {
    throw Error(source + ": truncated: the header promises " + shape + ", more than the " +
                std::to_string(payload) + " bytes of data in the file (record 1 is incomplete)");
  }
  std::uint64_t expected = 0;
  const bool overflow = __builtin_mul_overflow(record_bytes, std::uint64_t{h.dims[0]}, &expected);
  if (overflow || expected > payload) {
    const std::uint64_t complete = payload / record_bytes;
    throw Error(source + ": truncated: the header promises " + shape + " (" +
                (overflow ? std::string("over 2^64") : std::to_string(expected)) +
                " bytes of data), the file has " + std::to_string(payload) + " (record " +
                std::to_string(complete + 1) + " is incomplete)");
  }
  if (expected < payload) {
    throw Error(source + ": " + std::to_string(payload - expected) +
                " unexpected bytes after the last record (" + shape + ")");
  }
  return h;
}

// Big-endian value k of the payload as a double (exact for every IDX type).
double value_at(const unsigned char* p, std::uint8_t type) {
  switch (type) {
    case 0x08: return p[0];
    case 0x09: return static_cast<std::int8_t>(p[0]);
    case 0x0B: return static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] << 8 | p[1]));
    case 0x0C: return static_cast<std::int32_t>(be32(p));
    case 0x0D: {
      const std::uint32_t u = be32(p);
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    }
    case 0x0E: {
      const std::uint64_t u = std::uint64_t{be32(p)} << 32 | be32(p + 4);
      double d;
      std::memcpy(&d, &u, 8);
      return d;
    }
  }
  return 0;
}

}  // namespace

namespace detail {

IdxImages::IdxImages(std::string images, std::string_view labels, const std::string& source,
                     const std::string& labels_source)
    : bytes_(std::move(images)) {
  const IdxHeader h = read_header(bytes_, source);
  records_.source = source;
  records_.n_rows = h.dims[0];
  n_features_ = static_cast<std::size_t>(h.per_record);
  payload_offset_ = h.header_bytes;
  const std::size_t n = records_.n_rows * n_features_;  // <= payload bytes: checked above

  // Labels first: cheap, and a mismatch should not cost a full conversion.
  if (!labels.empty()) {
    const std::string lsrc = labels_source.empty() ? source + " (labels)" : labels_source;
    const IdxHeader lh = read_header(labels, lsrc);
    if (lh.dims.size() != 1) {
      throw Error(lsrc + ": a labels file must have 1 dimension, this one has " +
                  std::to_string(lh.dims.size()));
    }
    if (lh.type == 0x0D || lh.type == 0x0E) {
      throw Error(lsrc + ": labels must be integers, this file holds " + type_name(lh.type));
    }
    if (lh.dims[0] != h.dims[0]) {
      throw Error(source + ": " + std::to_string(h.dims[0]) + " images but " + lsrc + " has " +
                  std::to_string(lh.dims[0]) + " labels");
    }
    detail::LabelInterner interner;
    records_.labels.reserve(records_.n_rows);
    const auto* p = reinterpret_cast<const unsigned char*>(labels.data()) + lh.header_bytes;
    char buf[16];
    for (std::size_t r = 0; r < records_.n_rows; ++r, p += lh.elem) {
      const auto v = static_cast<long long>(value_at(p, lh.type));
      const auto res = std::to_chars(buf, buf + sizeof buf, v);
      records_.labels.push_back(
          interner.intern(std::string_view(buf, static_cast<std::size_t>(res.ptr - buf))));
    }
    records_.classes = interner.finish(records_.labels);
    records_.has_labels = true;
  }
  records_.row_origin.resize(records_.n_rows);
  for (std::size_t r = 0; r < records_.n_rows; ++r) records_.row_origin[r] = r + 1;

  uint8_ = h.type == 0x08;
  if (uint8_) return;  // read in place
  values_.resize(n);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data()) + h.header_bytes;
  const bool is_float = h.type == 0x0D || h.type == 0x0E;
  for (std::size_t k = 0; k < n; ++k, p += h.elem) {
    const double d = value_at(p, h.type);
    if (is_float) {
      const char* what = nullptr;
      if (std::isnan(d))
        what = "NaN is not allowed";
      else if (std::isinf(d))
        what = "infinity is not allowed";
      else if (std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()))
        what = "value out of float range";
      if (what) {
        throw Error(source + ": record " + std::to_string(k / n_features_ + 1) + ", value " +
                    std::to_string(k % n_features_ + 1) + ": " + what);
      }
    }
    float f = static_cast<float>(d);
    if (f == 0.0f) f = 0.0f;  // -0 → +0
    values_[k] = f;
  }
  // The floats are the rows now: the file's bytes are no longer needed.
  bytes_.clear();
  bytes_.shrink_to_fit();
}

DataView IdxImages::rows() const {
  if (uint8_)
    return DataView(reinterpret_cast<const std::uint8_t*>(bytes_.data()) + payload_offset_,
                    records_.n_rows, n_features_);
  return DataView(values_.data(), records_.n_rows, n_features_);
}

Dataset IdxImages::dataset(std::size_t first, std::size_t count) const {
  Dataset ds;
  ds.source = records_.source;
  ds.n_rows = count;
  ds.n_features = n_features_;
  ds.features.resize(count * n_features_);
  const std::size_t begin = first * n_features_, end = begin + count * n_features_;
  if (uint8_) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data()) + payload_offset_;
    for (std::size_t k = begin; k < end; ++k) ds.features[k - begin] = static_cast<float>(p[k]);
  } else {
    std::copy(values_.begin() + static_cast<std::ptrdiff_t>(begin),
              values_.begin() + static_cast<std::ptrdiff_t>(end), ds.features.begin());
  }
  const auto from = static_cast<std::ptrdiff_t>(first), to = static_cast<std::ptrdiff_t>(first + count);
  ds.has_labels = records_.has_labels;
  if (ds.has_labels) {
    ds.classes = records_.classes;
    ds.labels.assign(records_.labels.begin() + from, records_.labels.begin() + to);
  }
  ds.row_origin.assign(records_.row_origin.begin() + from, records_.row_origin.begin() + to);
  return ds;
}

}  // namespace detail

Dataset parse_idx(std::string_view images, std::string_view labels, const std::string& source,
                  const std::string& labels_source) {
  const detail::IdxImages idx(std::string(images), labels, source, labels_source);
  return idx.dataset(0, idx.n_rows());
}

}  // namespace flynn::io
