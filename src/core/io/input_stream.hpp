#pragma once
// Internal: the (decompressed) bytes of a file or memory buffer, read block by block, so
// that a reader holds one block at a time instead of the whole input. Not part of the
// public API; read_file and gunzip (loaders.hpp) and RowStream (row_stream.hpp) use it.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace flynn::io::detail {

/// Reads bytes from a file (or a memory buffer) and transparently gunzips them when they
/// start with the gzip magic (1f 8b). Concatenated gzip members are all decoded; zero
/// bytes after the last member are ignored (tape padding); other trailing bytes, corrupt
/// and truncated streams are errors (flynn::Error naming `source`). More than
/// `max_bytes` of output is an error naming the limit, so an endless pipe or a gzip bomb
/// cannot exhaust memory.
class InputStream {
 public:
  /// Opens `path`. Throws flynn::Error when it cannot be opened, is a directory, or is a
  /// regular file larger than `max_bytes`.
  InputStream(const std::string& path, std::uint64_t max_bytes);
  /// Reads from memory (`bytes` must outlive the stream); `source` names it in messages.
  InputStream(std::string_view bytes, std::string source, std::uint64_t max_bytes);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  /// Appends up to `n` bytes of (decompressed) content to `out`; returns how many were
  /// appended, 0 only at the end of the input.
  std::size_t read(std::string& out, std::size_t n);
  /// Whether the input is gzip-compressed (known after the first read).
  bool gzipped() const { return gzip_; }
  /// Whether the input is a regular file (false for pipes, devices and memory), i.e.
  /// whether it can be opened and read again from the start.
  bool rereadable() const { return regular_file_; }
  /// The size of a regular file in bytes (0 when unknown): a hint for whole-file reads.
  std::uint64_t size_hint() const { return size_hint_; }
  /// Bytes of content returned so far.
  std::uint64_t produced() const { return produced_; }
  /// Bytes read from the file itself so far (compressed bytes for gzip): with
  /// size_hint(), how far through the file reading is.
  std::uint64_t consumed() const { return raw_total_ - raw_available(); }

 private:
  // Tops up the raw buffer: keeps its unread bytes and reads more; false at the end of
  // the input (nothing more could be read).
  bool fill_raw();
  std::size_t raw_available() const { return raw_.size() - raw_pos_; }
  std::size_t read_plain(std::string& out, std::size_t n);
  std::size_t read_gzip(std::string& out, std::size_t n);
  // After a gzip member: another member follows (true), or the input ends, possibly after
  // zero padding (false); anything else is an error.
  bool next_member();
  void check_limit(std::uint64_t more, const char* what) const;

  struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string source_;
  std::uint64_t max_bytes_;
  std::unique_ptr<std::FILE, FileCloser> file_;  // null when reading from memory
  std::string_view memory_;                      // the rest of a memory input
  std::string raw_;                              // raw (possibly compressed) bytes
  std::size_t raw_pos_ = 0;                      // first unread byte of raw_
  bool raw_eof_ = false;                         // the source has no more raw bytes
  std::uint64_t raw_total_ = 0;                  // raw bytes read so far
  bool member_done_ = false;                     // the current gzip member has ended
  bool started_ = false;                         // the gzip magic check has run
  bool gzip_ = false;
  bool finished_ = false;                        // all content has been returned
  bool regular_file_ = false;
  std::uint64_t size_hint_ = 0;
  std::uint64_t produced_ = 0;
  z_stream zs_{};
  bool zs_ready_ = false;
};

}  // namespace flynn::io::detail
