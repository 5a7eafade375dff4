// read_file and gunzip: whole inputs read through the block-wise InputStream, which does
// the (multi-member) gzip decoding and enforces the input size limit.
#include <algorithm>
#include <string>

#include "core/io/input_stream.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::io {

namespace {

// Everything the stream yields. A regular plain file is read in one piece of its size
// (plus one byte to see the end); otherwise in 1 MiB steps, the string growing as needed.
std::string read_all(detail::InputStream& in) {
  std::string out;
  const std::size_t step = std::max<std::size_t>(std::size_t{1} << 20, in.size_hint() + 1);
  while (in.read(out, in.gzipped() ? std::size_t{1} << 20 : step) > 0) {
  }
  out.shrink_to_fit();
  return out;
}

}  // namespace

std::string gunzip(std::string_view bytes, const std::string& path, std::uint64_t max_bytes) {
  detail::InputStream in(bytes, path, max_bytes);
  return read_all(in);
}

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
  detail::InputStream in(path, max_bytes);
  return read_all(in);
}

}  // namespace flynn::io
