#pragma once
// Chunked reading of a data file: rows arrive in bounded chunks, so memory does not depend
// on the number of rows in the file (`flynn predict` and `flynn train` read this way).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "flynn/data_view.hpp"
#include "flynn/dataset.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::io {

/// How large one chunk of a RowStream may get.
struct ChunkLimits {
  /// Rows per chunk at most.
  std::size_t max_rows = 65536;
  /// Dense feature values (floats) per chunk at most: wide rows make chunks of fewer rows.
  /// A single row wider than this still makes a chunk of one row.
  std::uint64_t max_values = std::uint64_t{1} << 22;
  /// Bytes of (decompressed) text read from the file at a time; a line longer than this
  /// is read whole.
  std::size_t block_bytes = std::size_t{1} << 20;
};

/// Reads a data file (CSV/TSV, ARFF dense or sparse, LIBSVM; plain or gzip) in chunks of
/// rows. The format is resolved exactly as load_dataset does (name, then content), and
/// each chunk holds what load_dataset would give for those rows: the same feature values,
/// row_origin (file lines), errors (same messages, raised when the reader reaches the
/// offending line) and label spelling (canonical_label). Appending all chunks
/// (Dataset::append) gives load_dataset's Dataset (LIBSVM: when read with
/// expected_features, see Width).
///
/// Labels: each chunk's `classes` is the sorted set of the class names its own rows use,
/// and its `labels` are ids into that set; match chunks to a model's or a file-wide label
/// list by name (Dataset::class_ids_in, relabel, FlyNN::partial_fit).
///
/// Width: CSV and ARFF chunks all have the file's feature count. LIBSVM chunks have
/// LoadOptions::expected_features when it is set and are otherwise as wide as their own
/// largest feature index (so they may differ; take the largest over a first pass and read
/// again with expected_features set to it for equal widths).
///
/// Memory: one block of text, one chunk of rows and, for LIBSVM, the chunk's sparse
/// entries. IDX files are binary and read whole (then handed out in chunks): they are not
/// bounded by the chunk limits, but uint8 images are held as the file's bytes (a quarter
/// of their size as floats), and whole_file() gives all of their rows at once.
///
/// Whole-file errors ("empty file", "no data rows", LIBSVM "no feature in any row") are
/// raised by the next() call that reaches the end of the file; a format, header or row
/// error by the call that reads it (rows of earlier chunks have been handed out by then).
class RowStream {
 public:
  /// Opens `path` and reads its header (CSV: the first line or two; ARFF: up to `@data`).
  /// Throws flynn::Error as load_dataset would for an unreadable file or a bad header.
  explicit RowStream(const std::string& path, const LoadOptions& options = {},
                     const ChunkLimits& limits = {});
  ~RowStream();
  RowStream(RowStream&&) noexcept;
  RowStream& operator=(RowStream&&) noexcept;

  /// The format being read (Auto resolved).
  Format format() const;
  /// Whether rows carry a class label.
  bool has_labels() const;
  /// Features per row of every chunk; 0 for LIBSVM without expected_features, whose
  /// chunks are as wide as their own largest index.
  std::size_t n_features() const;
  /// Whether the file could be opened and read again from the start (a regular file;
  /// false for pipes, devices and standard input).
  bool rereadable() const;

  /// A file the stream holds whole (IDX, binary: read whole at open): every row where the
  /// stream holds it, and the rows' labels.
  struct WholeFile {
    /// Every row: bytes for uint8 images (as a caller's pixel array: the kernels read
    /// them without conversion), floats otherwise; valid while the stream lives.
    DataView rows;
    /// Their labels and origins: a Dataset of rows.n_rows() rows without feature columns
    /// (n_features = 0) holding source, has_labels, labels, classes (the file's, sorted as
    /// load_dataset's) and row_origin, for Dataset::class_ids_in and require_trainable.
    const Dataset* records = nullptr;
  };
  /// The whole file when the stream holds it (IDX), nullopt for text formats, which are
  /// only ever read chunk by chunk. Independent of next(): chunks are still handed out.
  std::optional<WholeFile> whole_file() const;

  /// Replaces `chunk` with the next rows (at least one); returns false, leaving `chunk`
  /// empty, at the end of the file. Throws flynn::Error naming the file and line on a bad
  /// row and at the end on whole-file errors.
  bool next(Dataset& chunk);
  /// Rows handed out so far.
  std::uint64_t rows_read() const;
  /// Bytes of the file read so far (compressed bytes for a gzip file): a progress measure
  /// against file_size().
  std::uint64_t bytes_read() const;
  /// The file's size in bytes; 0 when unknown (pipes, devices).
  std::uint64_t file_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flynn::io
