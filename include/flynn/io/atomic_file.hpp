#pragma once
// Safe file output. Every file flynn writes (models, prediction CSVs, reports) goes
// through write_file_atomic, which guarantees:
//  - readers see the old file or the new one, never a half-written one: the bytes go to a
//    temporary file created beside the target with mkstemp (unpredictable name, O_EXCL),
//    are flushed to disk, then renamed over the target, and the folder is synced;
//  - a symbolic link is followed: the file it points to is replaced (atomically, beside
//    the link's final target) and the link itself stays a link;
//  - a non-regular target is never replaced by a regular file: character devices (e.g.
//    /dev/null, a terminal) and FIFOs are written directly, in place; folders, sockets and
//    block devices are refused;
//  - on any error nothing is left behind (the temporary file is removed) and a
//    flynn::Error names the path and the cause.
// A replaced file keeps its permission bits; a new one gets 0644 less the umask.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace flynn::io {

/// Atomically replaces `path` with `bytes` (see the rules above). Throws flynn::Error
/// naming the path.
void write_file_atomic(const std::string& path, std::string_view bytes);

/// Atomically replaces `path` with what `fill` writes to the stream (for text outputs
/// such as prediction CSVs and reports). The text goes to the temporary file in 64 KiB
/// blocks as it is written, so an output of any size needs no more memory; when `fill`
/// throws, the target is left as it was (a device or FIFO has received what was written
/// so far). Throws flynn::Error naming the path.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill);

/// A file written completely beside its target but not yet in place: commit() moves it
/// over the target (atomically, as write_file_atomic does), and destroying it without a
/// commit removes it, so that nothing is left behind. For outputs that must appear only
/// once something else succeeded: a federated party writes its model only after every
/// party signed the same model digest and the coordinator confirmed the end.
class StagedFile {
 public:
  /// Writes `bytes` to a temporary file beside `path` (flushed to disk), following the
  /// rules of write_file_atomic; a character device or FIFO is written at commit, in
  /// place. Throws flynn::Error naming the path.
  StagedFile(const std::string& path, std::string_view bytes);
  /// Removes the temporary file unless committed.
  ~StagedFile();
  StagedFile(StagedFile&&) noexcept;
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  /// Moves the file into place (once). Throws flynn::Error naming the path (the
  /// temporary file is removed then).
  void commit();
  /// The target as given.
  const std::string& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Throws flynn::Error when the output `path` is the same file as one of `inputs` (same
/// device and inode after following links; files that do not exist never match), so that
/// a command never destroys the data or model it reads. `what` names the output in the
/// message (e.g. "model", "predictions").
void ensure_output_is_not_an_input(const std::string& path, const std::vector<std::string>& inputs,
                                   const std::string& what = "output");

}  // namespace flynn::io
