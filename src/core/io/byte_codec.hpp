#pragma once
// Little-endian byte encoding shared by the model file and the federation's messages.
#include <bit>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace flynn::io {

/// Appends fixed-width little-endian integers, IEEE-754 doubles and length-prefixed
/// strings to a byte string.
class ByteWriter {
 public:
  void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u16(std::uint16_t v) { le(v, 2); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
  void f32(float v) { u32(std::bit_cast<std::uint32_t>(v)); }
  void bytes(std::string_view b) { out_.append(b); }
  /// u32 length, then the bytes.
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out_.append(s);
  }
  std::string& data() { return out_; }

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  std::string out_;
};

/// Reads what ByteWriter writes. Every problem — reading past the end, or a caller's
/// fail() — goes to the `fail` handler, which must throw (the caller decides the error
/// type and how it names the source).
class ByteReader {
 public:
  using FailHandler = std::function<void(const std::string& message)>;
  ByteReader(std::string_view bytes, FailHandler fail) : b_(bytes), fail_(std::move(fail)) {}

  std::uint8_t u8(const char* what = "field") { return static_cast<std::uint8_t>(le(1, what)); }
  std::uint16_t u16(const char* what = "field") { return static_cast<std::uint16_t>(le(2, what)); }
  std::uint32_t u32(const char* what = "field") { return static_cast<std::uint32_t>(le(4, what)); }
  std::uint64_t u64(const char* what = "field") { return le(8, what); }
  double f64(const char* what = "field") { return std::bit_cast<double>(u64(what)); }
  float f32(const char* what = "field") { return std::bit_cast<float>(u32(what)); }
  std::string_view bytes(std::uint64_t n, const char* what = "bytes") {
    need(n, what);
    const std::string_view v = b_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  std::string str(const char* what = "string") { return std::string(bytes(u32(what), what)); }

  /// Fails unless every byte was read.
  void done() const {
    if (pos_ != b_.size()) fail(fmt::format("{} unexpected trailing bytes", b_.size() - pos_));
  }

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return b_.size() - pos_; }
  [[noreturn]] void fail(const std::string& message) const {
    fail_(message);
    throw std::logic_error("ByteReader fail handler returned");
  }

 private:
  void need(std::uint64_t n, const char* what) const {
    if (n > b_.size() - pos_) fail(fmt::format("truncated (while reading {} at byte {})", what, pos_));
  }
  std::uint64_t le(int n, const char* what) {
    need(static_cast<std::uint64_t>(n), what);
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(b_[pos_ + i])) << (8 * i);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }

  std::string_view b_;
  FailHandler fail_;
  std::size_t pos_ = 0;
};

}  // namespace flynn::io
