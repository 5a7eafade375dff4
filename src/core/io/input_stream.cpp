// InputStream: block-wise reading with transparent multi-member gzip decoding. read_file
// and gunzip are "read everything from an InputStream", so whole-file and streaming reads
// share one decoder and the same error messages.
#include "core/io/input_stream.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::io::detail {

namespace {

// Raw bytes are read in blocks of this size: large enough for fread and inflate to run
// efficiently, small enough not to matter for memory.
constexpr std::size_t kRawBlock = std::size_t{1} << 16;

[[noreturn]] void too_large(const std::string& source, std::uint64_t max_bytes, const char* what) {
  throw Error(source + ": " + what + " more than " + std::to_string(max_bytes) +
              " bytes, the input size limit");
}

bool starts_with_gzip_magic(std::string_view b) {
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f &&
         static_cast<unsigned char>(b[1]) == 0x8b;
}

}  // namespace

InputStream::InputStream(const std::string& path, std::uint64_t max_bytes)
    : source_(path), max_bytes_(max_bytes), file_(std::fopen(path.c_str(), "rb")) {
  if (!file_) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(::fileno(file_.get()), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error(path + ": is a directory, expected a data file");
    regular_file_ = S_ISREG(st.st_mode);
    if (regular_file_) {
      size_hint_ = static_cast<std::uint64_t>(st.st_size);
      if (size_hint_ > max_bytes) too_large(path, max_bytes, "holds");
    }
  }
}

InputStream::InputStream(std::string_view bytes, std::string source, std::uint64_t max_bytes)
    : source_(std::move(source)), max_bytes_(max_bytes), memory_(bytes) {
  // Memory input is gunzip()'s: it must be gzip, whatever its first bytes are (zlib then
  // reports the bad header).
  started_ = true;
  gzip_ = true;
  raw_eof_ = memory_.empty();
  if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) throw Error(source_ + ": cannot initialise zlib");
  zs_ready_ = true;
}

InputStream::~InputStream() {
  if (zs_ready_) inflateEnd(&zs_);
}

bool InputStream::fill_raw() {
  if (raw_eof_) return false;
  raw_.erase(0, raw_pos_);
  raw_pos_ = 0;
  std::size_t got = 0;
  if (file_) {
    const std::size_t old = raw_.size();
    raw_.resize(old + kRawBlock);
    got = std::fread(raw_.data() + old, 1, kRawBlock, file_.get());
    raw_.resize(old + got);
    if (got < kRawBlock) {
      if (std::ferror(file_.get())) throw Error(source_ + ": read error: " + std::strerror(errno));
      raw_eof_ = true;
    }
  } else {
    got = std::min(memory_.size(), kRawBlock);
    raw_.append(memory_.data(), got);
    memory_.remove_prefix(got);
    raw_eof_ = memory_.empty();
  }
  // A pipe or device has no size to check up front: count what it delivers. (Regular
  // files were checked at open; a memory input is the caller's.)
  raw_total_ += got;
  if (file_ && !regular_file_ && raw_total_ > max_bytes_) too_large(source_, max_bytes_, "holds");
  return got > 0;
}

void InputStream::check_limit(std::uint64_t more, const char* what) const {
  if (produced_ + more > max_bytes_) too_large(source_, max_bytes_, what);
}

std::size_t InputStream::read(std::string& out, std::size_t n) {
  if (!started_) {
    started_ = true;
    while (raw_available() < 2 && fill_raw()) {
    }
    gzip_ = starts_with_gzip_magic(std::string_view(raw_).substr(raw_pos_));
    if (gzip_) {
      // 16 + MAX_WBITS: expect a gzip wrapper (header + CRC32/ISIZE trailer checked by zlib).
      if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK)
        throw Error(source_ + ": cannot initialise zlib");
      zs_ready_ = true;
    }
  }
  if (finished_ || n == 0) return 0;
  const std::size_t got = gzip_ ? read_gzip(out, n) : read_plain(out, n);
  produced_ += got;
  if (got == 0) finished_ = true;
  return got;
}

std::size_t InputStream::read_plain(std::string& out, std::size_t n) {
  std::size_t got = 0;
  // Bytes already read for the magic check come first.
  if (raw_available() > 0) {
    got = std::min(n, raw_available());
    check_limit(got, "holds");
    out.append(raw_, raw_pos_, got);
    raw_pos_ += got;
  }
  if (got == n || raw_eof_ || !file_) return got;
  const std::size_t old = out.size();
  out.resize(old + (n - got));
  const std::size_t more = std::fread(out.data() + old, 1, n - got, file_.get());
  out.resize(old + more);
  raw_total_ += more;
  if (more < n - got) {
    if (std::ferror(file_.get())) throw Error(source_ + ": read error: " + std::strerror(errno));
    raw_eof_ = true;
  }
  check_limit(got + more, "holds");
  return got + more;
}

std::size_t InputStream::read_gzip(std::string& out, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    if (member_done_) {
      if (!next_member()) break;
      member_done_ = false;
    }
    if (raw_available() == 0) fill_raw();
    const std::size_t in_now = std::min<std::size_t>(raw_available(), UINT_MAX);
    zs_.next_in = reinterpret_cast<Bytef*>(raw_.data() + raw_pos_);
    zs_.avail_in = static_cast<uInt>(in_now);
    const std::size_t room = std::min<std::size_t>(n - got, UINT_MAX);
    const std::size_t old = out.size();
    out.resize(old + room);
    zs_.next_out = reinterpret_cast<Bytef*>(out.data() + old);
    zs_.avail_out = static_cast<uInt>(room);
    const int ret = inflate(&zs_, Z_NO_FLUSH);
    const std::size_t made = room - zs_.avail_out;
    out.resize(old + made);
    got += made;
    raw_pos_ += in_now - zs_.avail_in;
    check_limit(got, "decompresses to");
    if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT)
      throw Error(source_ + ": corrupt gzip data (" + (zs_.msg ? zs_.msg : "invalid stream") + ")");
    if (ret == Z_MEM_ERROR) throw Error(source_ + ": out of memory while decompressing");
    if (ret == Z_STREAM_END) {
      member_done_ = true;
      continue;
    }
    const bool no_progress = ret == Z_BUF_ERROR || (zs_.avail_in == in_now && made == 0);
    if (no_progress && raw_available() == 0 && raw_eof_)
      throw Error(source_ + ": truncated gzip data (the file ends inside the compressed stream)");
    if (ret != Z_OK && ret != Z_BUF_ERROR)
      throw Error(source_ + ": corrupt gzip data (zlib error " + std::to_string(ret) + ")");
  }
  return got;
}

bool InputStream::next_member() {
  while (raw_available() < 2 && fill_raw()) {
  }
  if (raw_available() == 0) return false;
  if (starts_with_gzip_magic(std::string_view(raw_).substr(raw_pos_))) {
    if (inflateReset(&zs_) != Z_OK) throw Error(source_ + ": cannot reset zlib");
    return true;
  }
  // Zero padding to the end is fine; anything else is garbage, reported with the number
  // of bytes after the last member.
  std::uint64_t rest = 0;
  bool garbage = false;
  do {
    const std::string_view tail = std::string_view(raw_).substr(raw_pos_);
    garbage = garbage || std::any_of(tail.begin(), tail.end(), [](char c) { return c != 0; });
    rest += tail.size();
    raw_pos_ = raw_.size();
  } while (fill_raw());
  if (garbage)
    throw Error(source_ + ": " + std::to_string(rest) + " bytes of trailing garbage after the gzip data");
  return false;
}

}  // namespace flynn::io::detail
