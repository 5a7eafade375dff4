#pragma once
// Data loaders: CSV (plain or gzip), ARFF (dense and sparse rows), IDX (MNIST family,
// plain or gzip) and LIBSVM/svmlight.
//
// Every loader returns a flynn::Dataset whose features are finite floats and whose labels
// (when present) are ids into the sorted set of class names found in the file
// (LabelSet::sorted). Every problem throws flynn::Error with a one-line message naming the
// file, the 1-based line (record for IDX) and, where it applies, the 1-based column or
// field: non-numeric value, ragged row, NaN/Inf, empty file, truncated file, bad header.
//
// Message shapes (the file is named as the caller spelled it):
//   "data.csv:17:4: 'abc' is not a number"        line 17, column 4
//   "data.csv:9: 5 fields, expected 7 (ragged row)"
//   "data.csv:3:2: NaN is not allowed"
//   "data.csv: empty file"
//   "images-idx3-ubyte: record 17, value 5: NaN is not allowed"   (IDX: records, not lines)
//
// Rules shared by all text formats (CSV, ARFF, LIBSVM):
// - Numbers are parsed with std::from_chars (locale independent): an optional sign (a
//   leading '+' is accepted), decimal digits, optional fraction and exponent. Hexadecimal
//   floats, thousands separators and decimal commas are "not a number".
// - Every value must be finite once stored as a float: "nan", "inf", "infinity" (any case,
//   any sign) and values whose magnitude exceeds FLT_MAX (e.g. 1e39) are errors. Values
//   below the smallest float round to 0 (they are not errors). -0.0 is stored as +0.0.
// - Line numbers count every physical line of the (gunzipped) text, blank and comment
//   lines included, so they match what an editor shows. "\r\n" line ends are accepted,
//   a UTF-8 byte-order mark at the start is ignored, a missing final newline is fine.
// - Blank (whitespace-only) lines are skipped wherever they appear.
// - Dataset::row_origin holds the 1-based line of each row (the record number for IDX).
//
// load_dataset reads a whole file; io::RowStream (row_stream.hpp) reads the same formats
// in bounded chunks of rows with the same parsers, values and messages.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "flynn/dataset.hpp"
#include "flynn/io/table_columns.hpp"
#include "flynn/table_schema.hpp"

namespace flynn::io {

enum class Format { Auto, Csv, Arff, Idx, Libsvm };

/// Parses "csv", "arff", "idx", "libsvm"/"svmlight", "auto" (any case); throws on anything
/// else.
Format parse_format(const std::string& name);
/// "auto", "csv", "arff", "idx", "libsvm".
const char* format_name(Format f);

/// Guesses the format from the file name (after stripping a trailing ".gz"; case is
/// ignored): .arff → ARFF, .libsvm/.svm/.svmlight → LIBSVM, names containing "idx"
/// followed by "-ubyte" (e.g. "train-images-idx3-ubyte", "t10k-labels.idx1-ubyte") or
/// ending .idx → IDX, everything else CSV.
Format detect_format(const std::string& path);

/// Where the class label is, for formats with columns (CSV, ARFF).
struct LabelColumn {
  enum class Kind { Last, Index, Name, None };
  Kind kind = Kind::Last;
  long index = 0;    ///< for Index: 1-based column number, or negative counting from the end
  std::string name;  ///< for Name: the header (CSV) or attribute (ARFF) name
  /// Parses the CLI spelling: "last", "none" (any case), a non-zero integer (1-based,
  /// negative from the end: -1 is the last column) or otherwise a column name. "0" and an
  /// empty string are errors. A column literally named "last" or "none" must be given by
  /// its number.
  static LabelColumn parse(const std::string& text);
};

/// The default cap on decompressed input size (LoadOptions::max_input_bytes): 4 GiB.
inline constexpr std::uint64_t kDefaultMaxInputBytes = std::uint64_t{4} << 30;

struct LoadOptions {
  Format format = Format::Auto;
  LabelColumn label_column;  ///< CSV/ARFF: which column holds the class
  /// CSV: whether the first line is a header. Auto: it is when any of its feature fields
  /// (every field but the label column's) is text above a number on line 2. When every
  /// such field is text on line 2 too (categorical columns, or an all-text table) it is
  /// a header only when the next rows (up to 64) show it: line 1's fields are distinct
  /// and none of its text fields (the label's included) occurs in its column below,
  /// where at least two of those columns repeat values. When only the label field of
  /// line 1 is not a number (e.g. "1,2,class" or "1,2,cat") line 1 is a header only if
  /// the next line's label field is a number. The decisions that are guesses are sent as
  /// notes (load_notes.hpp). A header must have as many fields as the data rows. Label
  /// column Kind::Name implies a header (Header::No is then an error).
  enum class Header { Auto, Yes, No } header = Header::Auto;
  char delimiter = 0;      ///< CSV: 0 = detect among `,`, `;` and tab from line 1
  std::string idx_labels;  ///< IDX: the labels file; empty = derive from the name
  /// When set, the data must have this many features. Files with exactly this many
  /// columns are read as unlabelled (CSV, ARFF), files with one more as labelled; for
  /// LIBSVM it bounds the feature indices. Used by `predict`, whose data may lack labels.
  /// CSV/ARFF: with exactly D columns and a label column given explicitly (Index or Name)
  /// it is an error; with D+1 columns and Kind::None it is an error. For IDX the product
  /// of the non-record dimensions must equal D.
  std::optional<std::size_t> expected_features;
  /// IDX: when false and no labels file is found, load unlabelled instead of failing.
  bool require_labels = true;
  /// Upper bound on n_rows × n_features that a loader allocates. Only formats whose
  /// dense size is not bounded by the file size need it (LIBSVM, sparse ARFF rows): a
  /// corrupt or hostile index such as "1:0 4000000000:1", or a header declaring a million
  /// attributes, is an error instead of a huge allocation. 0 (the default) means
  /// sparse_value_limit(input bytes): 2^26 + one value per input byte, so the dense rows
  /// of such a file take at most 256 MiB + 4 × its size. Set it to load very sparse data
  /// whose dense form is larger (the fuzz targets lower it).
  std::uint64_t max_values = 0;
  /// Upper bound on the bytes a file may hold once decompressed; beyond it loading stops
  /// with an error naming the limit, so /dev/zero, an endless pipe or a gzip bomb cannot
  /// exhaust memory. The default (kDefaultMaxInputBytes, 4 GiB) is far beyond the tables
  /// flynn loads whole; the CLI's --max-input-bytes changes it.
  std::uint64_t max_input_bytes = kDefaultMaxInputBytes;

  // ---- Tables (CSV; ARFF: missing values, names and nominal/string columns) ----
  // (see table_columns.hpp)
  /// CSV/ARFF: the column holding a row id (--id-col), passed through to predictions
  /// (Dataset::row_ids) and never a feature. Kind::None (the default) = no id column;
  /// Kind::Last = the last column. At prediction, a column named like the training id
  /// column is the id when this is None.
  LabelColumn id_column{LabelColumn::Kind::None, 0, {}};
  /// CSV: only these columns are features (--feature-cols; empty = every column that is
  /// not the label, the id or ignored).
  ColumnSelector feature_columns;
  /// CSV/ARFF: columns that are read but not used (--ignore-cols).
  ColumnSelector ignore_columns;
  /// Missing cells in feature columns (empty, "NA", "?", "nan", any case): an error, 0,
  /// or (default) the training mean of the feature. Labels may not be missing.
  MissingPolicy missing = MissingPolicy::Mean;
  /// Whether `missing` was given (a --missing flag): when not, reading rows for a model
  /// (io::model_load_options) takes the policy the model was trained with, when it
  /// recorded one (FlyNN::missing_policy).
  bool missing_given = false;
  /// MissingPolicy::Mean without `schema`: when true (default) the loader fills missing
  /// cells with the file's own means (complete_table); when false it leaves them NaN so
  /// that a federation can fill them with the means of all parties (ImputationSums
  /// all-reduced, then complete_table). With a `schema` that has no fill values, false
  /// also leaves missing cells NaN (instead of an error) for the caller to fill.
  bool impute = true;
  /// Prediction: the model's table schema (not owned; must outlive the call). Feature
  /// columns are matched by name (or position), categories one-hot encoded with the
  /// model's categories and missing cells filled with its means. Null or empty = the
  /// table is read as at training.
  const TableSchema* schema = nullptr;
};

/// The automatic LoadOptions::max_values for an input of `input_bytes` (decompressed):
/// 2^26 + input_bytes values.
std::uint64_t sparse_value_limit(std::uint64_t input_bytes);

/// Loads a file of any supported format.
///
/// Format::Auto guesses from the name (detect_format); in addition, a file the name calls
/// CSV whose bytes start with an IDX magic (00 00 type ndims with a known type) is read as
/// IDX, and one whose first non-blank, non-'%' line starts with "@relation" (any case) is
/// read as ARFF. IDX: the labels file is LoadOptions::idx_labels, or
/// idx_labels_path_for(path); when neither names an existing file the result is
/// unlabelled if !require_labels and an error (suggesting --idx-labels FILE) otherwise.
Dataset load_dataset(const std::string& path, const LoadOptions& options = {});

/// Reads a whole file; transparently gunzips it when it starts with the gzip magic
/// (1f 8b). Concatenated gzip members (as written by `cat a.gz b.gz`, pigz, bgzip) are all
/// decoded; zero bytes after the last member are ignored (tape padding), any other trailing
/// bytes are an error. Throws flynn::Error naming the file when it cannot be opened, is a
/// directory, or is a corrupt or truncated gzip, and when its (decompressed) content is
/// longer than `max_bytes`.
std::string read_file(const std::string& path, std::uint64_t max_bytes = kDefaultMaxInputBytes);

/// Reads a whole file as it is stored (no gzip decoding): regular files, pipes, devices.
/// Throws flynn::Error naming the file when it cannot be opened, is a directory, cannot be
/// read, or holds more than `max_bytes` (checked before reading a regular file, and while
/// reading anything else, so /dev/zero stops at the limit).
std::string read_file_bytes(const std::string& path,
                            std::uint64_t max_bytes = kDefaultMaxInputBytes);

/// Decompresses gzip bytes (one or more members; trailing zero padding allowed). Throws
/// flynn::Error naming `source` on corrupt, truncated or trailing-garbage input, and when
/// the output would exceed `max_bytes`.
std::string gunzip(std::string_view bytes, const std::string& source,
                   std::uint64_t max_bytes = kDefaultMaxInputBytes);

/// For an IDX images file name, the conventional labels file beside it:
/// "…-images-idx3-ubyte[.gz]" → "…-labels-idx1-ubyte[.gz]" (also "…-images.idx3-ubyte").
/// Returns an empty string when the name does not follow the convention or no such file
/// exists (the .gz and plain spellings are both tried, the images' own spelling first).
std::string idx_labels_path_for(const std::string& images_path);

// In-memory parsers: what the loaders use once the bytes are read, and what the fuzz
// targets exercise. `source` is only used in messages.

/// CSV. Fields are separated by one delimiter character (LoadOptions::delimiter, or the
/// most frequent of `,`, `;` and tab outside quotes on line 1, `,` on a tie or when none
/// occurs). Fields are trimmed of spaces and tabs. A field may be double-quoted
/// (RFC 4180: "" inside quotes is one quote; the delimiter may appear inside quotes); a
/// quoted field ends at its closing quote, and only spaces/tabs may follow before the next
/// delimiter. Quoted fields cannot span lines. Quoted numbers ("1.5") are numbers.
/// Labels are arbitrary non-empty strings: the trimmed field, or the exact text between
/// the quotes of a quoted field. Header names are trimmed and unquoted the same way.
/// Errors: empty file, header without data rows, ragged rows, Inf or out-of-range
/// numbers, empty labels, label column out of range or not found, column count not
/// matching expected_features.
/// Columns (table_columns.hpp): --id-col/--ignore-cols/--feature-cols pick them; missing
/// cells (empty, NA, ?, nan) follow LoadOptions::missing; a feature column holding text
/// is categorical and one-hot encoded (sorted categories; a column of distinct values is
/// refused as an identifier). The header auto-detection (LoadOptions::header) treats line
/// 1 as a header when it holds every name of LoadOptions::schema, and otherwise decides
/// from line 1 and up to 64 rows below it.
Dataset parse_csv(std::string_view text, const LoadOptions& options, const std::string& source);

/// ARFF (Weka). Keywords (`@relation`, `@attribute`, `@data`, attribute types) are case
/// insensitive; lines whose first non-blank character is '%' are comments; `@relation` is
/// optional. Attribute names and nominal values may be quoted with ' or " (backslash
/// escapes the next character). Types: numeric, real, integer, {nominal list}, string;
/// date is accepted in the header but is an error when the attribute is a feature, and
/// relational is refused. Feature columns are encoded as CSV columns are
/// (table_columns.hpp, TableSchema): a nominal attribute is one-hot over its declared
/// values in declared order (more than TableColumn::kMaxCategories is an error;
/// a value not declared is an error naming the cell); a string attribute is a CSV text
/// column (numeric when every value is a number, else one-hot over the sorted values
/// found, learned in a first pass; a RowStream reading for training without the schema
/// throws a flynn::Error for it as for a CSV text column). At prediction the schema's columns decide (its categories;
/// an unseen value is an all-zero block); a nominal attribute where the model has a
/// numeric feature (or only LoadOptions::expected_features) is an error.
/// The class attribute is chosen by LoadOptions::label_column over the attributes (Last
/// by default; Index is 1-based, negative from the end; Name; None = no class). The class
/// may be nominal (values must be in the declared list), numeric/real/integer (the value
/// must be a finite number; its text, as written, is the label) or string (any non-empty
/// text); a date or relational class is an error. The dataset's classes are the values
/// PRESENT in the data (LabelSet::sorted), not the declared list.
/// Data rows: dense "v1,v2,..." (exactly one value per attribute) or sparse
/// "{i v, j v, ...}" with 0-based attribute indices in strictly ascending order; an
/// omitted numeric feature is 0, an omitted nominal one its first declared value (sparse
/// ARFF stores a nominal value as its index), an omitted string attribute or class is an
/// error. Missing feature values '?' (for string attributes also the other CSV spellings
/// of a missing cell) follow LoadOptions::missing as missing CSV cells do (a missing
/// category is an all-zero block; a missing class value is an error). Training stores the feature
/// attributes' names in Dataset::schema (so models keep them); at prediction with a named
/// LoadOptions::schema the attributes are matched by position and must carry its names. Weka instance weights ("..., {w}") are not supported. Columns
/// in messages are 1-based value positions in the row (entry positions for sparse rows).
Dataset parse_arff(std::string_view text, const LoadOptions& options, const std::string& source);

/// LIBSVM/svmlight: "label idx:val idx:val ... # comment" per line, separated by spaces
/// or tabs. Indices are 1-based and strictly ascending within a line (0, duplicates or
/// descending indices are errors naming the line and the field); "qid:N" tokens are
/// ignored; '#' starts a comment; lines that are blank or only a comment are skipped.
/// n_features is the largest index in the file, or expected_features when given (an index
/// above it is then an error). Unlisted features are 0. Every line has a label (the
/// dataset is always labelled): labels that are integers are written in canonical
/// decimal form ("+1" → "1", "007" → "7", "-0" → "0") so that files that spell the
/// same class differently agree; any other label token is kept verbatim.
Dataset parse_libsvm(std::string_view text, const LoadOptions& options, const std::string& source);

/// IDX (MNIST family). `labels` may be empty (unlabelled images). Both are raw (already
/// gunzipped) IDX bytes: 00 00 type ndims, ndims big-endian uint32 dimensions, then the
/// big-endian values. Types: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32,
/// 0x0E float64. Images: ndims >= 1, rows = dimension 0, features = product of the other
/// dimensions (1 when ndims == 1). Labels: ndims == 1 and an integer type; the class
/// names are the decimal integers ("0".."9"). The payload must match the header exactly
/// (truncated or oversized files are errors) and the label count must equal the number
/// of images. Values are stored as float (uint8 0..255 stays 0..255: no scaling).
/// `labels_source` names the labels file in messages (default: source + " (labels)").
Dataset parse_idx(std::string_view images, std::string_view labels, const std::string& source,
                  const std::string& labels_source = {});

}  // namespace flynn::io
