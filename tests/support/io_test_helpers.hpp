#pragma once
// Helpers for the loader and dataset tests: capturing flynn::Error messages, building
// gzip and IDX bytes in memory.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "flynn/error.hpp"

namespace flynn::test {

/// The message of the flynn::Error thrown by `f`, or "<no error>" when it returns.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const flynn::Error& e) {
    return e.what();
  }
  return "<no error>";
}

/// Success when `message` is one line and contains every part.
inline ::testing::AssertionResult contains(const std::string& message,
                                           std::initializer_list<std::string_view> parts) {
  if (message.find('\n') != std::string::npos) {
    return ::testing::AssertionFailure() << "message is not one line: " << message;
  }
  for (std::string_view p : parts) {
    if (message.find(p) == std::string::npos) {
      return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << p << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

/// `text` compressed as one gzip member.
inline std::string gzip_bytes(std::string_view text, int level = 6) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return {};
  std::string out(deflateBound(&zs, static_cast<uLong>(text.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

/// An IDX header: 00 00 type ndims, then the dimensions big-endian.
inline std::string idx_header(std::uint8_t type, const std::vector<std::uint32_t>& dims) {
  std::string h;
  h += '\0';
  h += '\0';
  h += static_cast<char>(type);
  h += static_cast<char>(dims.size());
  for (std::uint32_t d : dims) {
    h += static_cast<char>(d >> 24);
    h += static_cast<char>(d >> 16);
    h += static_cast<char>(d >> 8);
    h += static_cast<char>(d);
  }
  return h;
}

/// A uint8 IDX file with the given dims and values.
inline std::string idx_u8(const std::vector<std::uint32_t>& dims,
                          const std::vector<std::uint8_t>& values) {
  std::string s = idx_header(0x08, dims);
  s.append(values.begin(), values.end());
  return s;
}

}  // namespace flynn::test
