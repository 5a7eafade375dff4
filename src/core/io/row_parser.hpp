#pragma once
// Internal: the text formats' parsers (CSV, ARFF, LIBSVM), each split into a header step
// and a rows step so that one parser serves both whole-file loading (parse_csv & co.:
// the whole text is one chunk) and chunked reading (RowStream: the rows arrive block by
// block). Not part of the public API.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/io/idx_images.hpp"
#include "core/io/text_scanner.hpp"
#include "flynn/dataset.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::io::detail {

/// Thrown by RowParser::begin when the header continues past the lines it was given and
/// the text goes on: the caller reads more text and calls begin() again from the start.
struct NeedMoreText {};

/// One text format's parser. Protocol: begin() once (the header); then, per chunk,
/// read_rows() as often as needed (each call parses lines until the chunk is full or the
/// lines run out) and take_chunk(); finally end() (whole-file checks such as "no data
/// rows"). Parsing a whole text is exactly that with a single chunk (parse_text).
class RowParser {
 public:
  virtual ~RowParser() = default;

  /// Reads the header from the start of the text (CSV: the first non-blank line and the
  /// header decision, which may peek at the next line; ARFF: everything up to @data;
  /// LIBSVM: nothing). `at_end`: `lines` holds the rest of the text, so running out of
  /// lines is the file's end rather than NeedMoreText. May put the first row into the
  /// current chunk (a CSV without header). Calling it again starts over.
  virtual void begin(LineScanner& lines, bool at_end) = 0;
  /// Whether rows carry a class label (known after begin()).
  virtual bool has_labels() const = 0;
  /// Features per row, known after begin(); 0 when each chunk is as wide as its largest
  /// feature index (LIBSVM without LoadOptions::expected_features).
  virtual std::size_t fixed_width() const = 0;
  /// Parses data lines into the current chunk until it holds `max_rows` rows or `lines`
  /// ends. `max_values` bounds the dense values a chunk may hold (the hostile-input
  /// limit, LoadOptions::max_values); exceeding it is an error.
  virtual void read_rows(LineScanner& lines, std::size_t max_rows, std::uint64_t max_values) = 0;
  /// Rows in the current chunk.
  virtual std::size_t chunk_rows() const = 0;
  /// Hands out the current chunk (labels as ids into the sorted set of the chunk's class
  /// names, row_origin filled) and starts an empty one.
  virtual Dataset take_chunk(std::uint64_t max_values) = 0;
  /// Checks made once the whole text has been read (e.g. "no data rows").
  virtual void end() = 0;
  /// Stops a chunk of unknown width before a row would take it past `cells` dense values
  /// (RowStream's memory bound; fixed-width chunks are bounded by their row count).
  void set_chunk_cells(std::uint64_t cells) { chunk_cells_ = cells; }

 protected:
  std::uint64_t chunk_cells_ = std::numeric_limits<std::uint64_t>::max();
};

/// The chunk a table parser (CSV, ARFF) fills row by row: its rows, their provisional
/// label ids and the running total of rows handed out. One home for starting and handing
/// out a chunk, so both formats' chunks come out alike.
struct TableChunk {
  Dataset rows;
  LabelInterner interner;
  std::uint64_t total_rows = 0;  ///< rows of all chunks handed out
  /// Starts an empty chunk of `n_features` columns (`labelled`: rows carry labels).
  void reset(const std::string& source, std::size_t n_features, bool labelled);
  /// Hands out the chunk (label ids into the chunk's sorted class names; `schema` attached
  /// when not null), counting its rows; the parser then reset()s.
  Dataset take(const TableSchema* schema);
};

/// A table format's parser (CSV, ARFF) and what every such parser holds: its options and
/// source, the chunk it fills, its width and whether rows are labelled. A text column may
/// have to be one-hot encoded, and its categories must then be known before any row is
/// encoded: in training, text in a column taken for numeric throws TextInNumericColumn
/// (table_encoder.hpp); parse_table_text then learns the categories in a pass of their own
/// (learn_categories) and encodes again (use_schema).
class TableParser : public RowParser {
 public:
  TableParser(const LoadOptions& options, std::string source) : options_(options), source_(std::move(source)) {}

  /// Training: encode with this schema (the categories a learning pass found) instead of
  /// discovering one. Call before begin().
  void use_schema(TableSchema schema) { learned_ = std::move(schema); }
  /// Training: rows feed a schema builder instead of being encoded (the chunk stays
  /// empty); learned_schema() and observed_rows() give the result. Call before begin().
  void learn_categories() { learning_ = true; }
  /// The schema the rows observed so far call for (learn_categories() mode).
  virtual TableSchema learned_schema() const = 0;
  /// Data rows observed (learn_categories() mode).
  std::uint64_t observed_rows() const { return observed_rows_; }

  bool has_labels() const override { return labelled_; }
  std::size_t fixed_width() const override { return n_features_; }
  std::size_t chunk_rows() const override { return chunk_.rows.n_rows; }

 protected:
  const LoadOptions& options_;
  std::string source_;
  std::optional<TableSchema> learned_;  // use_schema()
  bool learning_ = false;               // learn_categories()
  std::uint64_t observed_rows_ = 0;     // learn_categories()
  bool labelled_ = false;
  std::size_t n_features_ = 0;
  TableChunk chunk_;
};

std::unique_ptr<TableParser> make_csv_parser(const LoadOptions& options, const std::string& source);
std::unique_ptr<TableParser> make_arff_parser(const LoadOptions& options, const std::string& source);
std::unique_ptr<RowParser> make_libsvm_parser(const LoadOptions& options, const std::string& source);
/// The parser for a text format (Csv, Arff or Libsvm).
std::unique_ptr<RowParser> make_row_parser(Format format, const LoadOptions& options,
                                           const std::string& source);

/// The hostile-input bound on dense values for an input of `input_bytes`:
/// options.max_values, or sparse_value_limit(input_bytes) when that is 0.
std::uint64_t value_limit(const LoadOptions& options, std::uint64_t input_bytes);

/// For a file that Format::Auto calls CSV by its name: Idx when `head` starts with an IDX
/// magic (00 00 type ndims with a known type), Arff when its first non-blank, non-'%' line
/// starts with "@relation" (any case), else Csv. `head` is the start of the (decompressed)
/// content, all of it when `at_end`; throws NeedMoreText when it is too short to decide.
Format sniff_format(std::string_view head, bool at_end);
/// The format to read `path` with: `requested` unless Auto; else detect_format(path),
/// refined by sniff_format(head, at_end) when the name says CSV.
Format resolve_format(const std::string& path, Format requested, std::string_view head,
                      bool at_end);

/// Reads IDX images whose (decompressed) bytes are `bytes` (kept: uint8 rows are read in
/// place), with the labels file of LoadOptions::idx_labels or idx_labels_path_for(path)
/// (see load_dataset); checks LoadOptions::expected_features.
IdxImages load_idx(const std::string& path, std::string bytes, const LoadOptions& options);

/// Parses a whole text as one chunk: what parse_libsvm returns, and each pass of
/// parse_table_text.
Dataset parse_text(RowParser& parser, std::string_view text, const LoadOptions& options);

/// A whole table text (what parse_csv and parse_arff return), with parsers from `make`:
/// one pass; or, when a text column must be one-hot encoded, a pass that learns the
/// categories and a second that encodes with them, the encoded size bounded first
/// (check_one_hot_size, by value_limit). In training under --missing mean, the means of
/// the whole text then fill its missing cells.
Dataset parse_table_text(const std::function<std::unique_ptr<TableParser>()>& make, std::string_view text,
                         const LoadOptions& options, const std::string& source);

}  // namespace flynn::io::detail
