// read_file and gunzip: whole inputs read through the block-wise InputStream, which does
// the (multi-member) gzip decoding and enforces the input size limit; read_file_bytes:
// a bounded read of the stored bytes, no decoding (model files).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "flynn/error.hpp"

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

std::string read_file_bytes(const std::string& path, std::uint64_t max_bytes) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
  auto too_large = [&] {
    throw Error(path + ": holds more than " + std::to_string(max_bytes) +
                " bytes, the input size limit");
  };
  struct stat st {};
  if (::fstat(::fileno(f.get()), &st) == 0 && S_ISDIR(st.st_mode))
    throw Error(path + ": is a directory, expected a data file");
  std::string bytes;
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) too_large();
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    bytes.resize(static_cast<std::size_t>(st.st_size));
    bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f.get()));
  }
  // Whatever the size said (pipes, /proc files, a file that grew): read to the end.
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    if (bytes.size() + n > max_bytes) too_large();
    bytes.append(buf, n);
  }
  if (std::ferror(f.get())) throw Error(path + ": read error: " + std::strerror(errno));
  return bytes;
}

}  // namespace flynn::io
