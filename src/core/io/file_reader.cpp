// read_file_bytes / read_file: bounded whole-file reads, the latter with transparent (multi-member) gzip decoding.
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::io {

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

[[noreturn]] void too_large(const std::string& path, std::uint64_t max_bytes, const char* what) {
  throw Error(path + ": " + what + " more than " + std::to_string(max_bytes) +
              " bytes, the input size limit");
}

}  // namespace

std::string gunzip(std::string_view in, const std::string& path, std::uint64_t max_bytes) {
  z_stream zs{};
  // 16 + MAX_WBITS: expect a gzip wrapper (header + CRC32/ISIZE trailer checked by zlib).
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw Error(path + ": cannot initialise zlib");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&zs};

  std::string out;
  // The trailer's ISIZE (size mod 2^32 of the last member) is a good first guess for
  // single-member files; growth by doubling handles the rest. Capped so a forged trailer
  // cannot force a huge up-front allocation.
  std::size_t guess = in.size() * 4;
  if (in.size() >= 18) {
    const auto* t = reinterpret_cast<const unsigned char*>(in.data() + in.size() - 4);
    const std::size_t isize = std::size_t{t[0]} | std::size_t{t[1]} << 8 | std::size_t{t[2]} << 16 |
                              std::size_t{t[3]} << 24;
    guess = std::max(guess, std::min<std::size_t>(isize, in.size() * 1100));
  }
  guess = std::min<std::uint64_t>(guess, max_bytes);
  out.resize(std::max<std::size_t>(guess, 1 << 16));

  std::size_t in_pos = 0;    // bytes of `in` handed to zlib so far
  std::size_t produced = 0;  // bytes of `out` filled
  auto feed = [&] {
    if (zs.avail_in == 0 && in_pos < in.size()) {
      const std::size_t chunk = std::min<std::size_t>(in.size() - in_pos, UINT_MAX);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_pos));
      zs.avail_in = static_cast<uInt>(chunk);
      in_pos += chunk;
    }
  };

  while (true) {
    // Decode one member.
    int ret = Z_OK;
    while (ret != Z_STREAM_END) {
      feed();
      if (produced > max_bytes) too_large(path, max_bytes, "decompresses to");
      if (out.size() - produced < (1 << 15))
        out.resize(std::min<std::uint64_t>(out.size() * 2, max_bytes + (1 << 16)));
      const std::size_t room = std::min<std::size_t>(out.size() - produced, UINT_MAX);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
      zs.avail_out = static_cast<uInt>(room);
      const uInt avail_in_before = zs.avail_in;
      ret = inflate(&zs, Z_NO_FLUSH);
      produced += room - zs.avail_out;
      if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT) {
        throw Error(path + ": corrupt gzip data (" + (zs.msg ? zs.msg : "invalid stream") + ")");
      }
      if (ret == Z_MEM_ERROR) throw Error(path + ": out of memory while decompressing");
      const bool no_progress =
          ret == Z_BUF_ERROR || (zs.avail_in == avail_in_before && room == zs.avail_out);
      if (ret != Z_STREAM_END && zs.avail_in == 0 && in_pos == in.size() && no_progress) {
        throw Error(path + ": truncated gzip data (the file ends inside the compressed stream)");
      }
      if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
        throw Error(path + ": corrupt gzip data (zlib error " + std::to_string(ret) + ")");
      }
    }
    // Bytes after this member: another member, zero padding, or garbage.
    const std::size_t consumed = in_pos - zs.avail_in;
    const std::size_t rest = in.size() - consumed;
    if (rest == 0) break;
    if (rest >= 2 && static_cast<unsigned char>(in[consumed]) == 0x1f &&
        static_cast<unsigned char>(in[consumed + 1]) == 0x8b) {
      if (inflateReset(&zs) != Z_OK) throw Error(path + ": cannot reset zlib");
      continue;  // zs.next_in/avail_in still point at the next member
    }
    if (std::all_of(in.begin() + static_cast<std::ptrdiff_t>(consumed), in.end(),
                    [](char c) { return c == 0; }))
      break;
    throw Error(path + ": " + std::to_string(rest) +
                " bytes of trailing garbage after the gzip data");
  }
  if (produced > max_bytes) too_large(path, max_bytes, "decompresses to");
  out.resize(produced);
  out.shrink_to_fit();
  return out;
}

std::string read_file_bytes(const std::string& path, std::uint64_t max_bytes) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(::fileno(f.get()), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw Error(path + ": is a directory, expected a data file");
  }
  std::string bytes;
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes)
    too_large(path, max_bytes, "holds");
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    bytes.resize(static_cast<std::size_t>(st.st_size));
    bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f.get()));
  }
  // Whatever the size said (pipes, /proc files, a file that grew): read to the end.
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    if (bytes.size() + n > max_bytes) too_large(path, max_bytes, "holds");
    bytes.append(buf, n);
  }
  if (std::ferror(f.get())) throw Error(path + ": read error: " + std::strerror(errno));
  return bytes;
}

std::string read_file(const std::string& path, std::uint64_t max_bytes) {
  std::string bytes = read_file_bytes(path, max_bytes);
  if (is_gzip(bytes)) return gunzip(bytes, path, max_bytes);
  return bytes;
}

}  // namespace flynn::io
