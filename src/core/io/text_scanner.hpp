#pragma once
// Internal helpers shared by the text loaders (CSV, ARFF, LIBSVM): line scanning, trimming,
// strict number parsing, label interning and error messages. Not part of the public API.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flynn/dataset.hpp"

namespace flynn::io::detail {

/// Walks a text buffer line by line. Lines exclude their "\n" / "\r\n" terminator; a
/// leading UTF-8 BOM is skipped; line numbers are 1-based.
class LineScanner {
 public:
  /// Scans a whole text: a leading BOM is skipped, the first line is line 1.
  explicit LineScanner(std::string_view text);
  /// Scans one block of a longer text (RowStream): `lines_before` lines precede it (the
  /// first line of the block is number lines_before + 1) and a BOM is skipped only when
  /// `at_start` (the block begins the text).
  LineScanner(std::string_view text, std::uint64_t lines_before, bool at_start);
  /// The next physical line; false at the end of the text.
  bool next(std::string_view& line);
  /// 1-based number of the line last returned by next().
  std::uint64_t line_number() const { return line_; }
  /// Bytes of the text given to the constructor consumed so far (a skipped BOM included).
  std::size_t consumed() const { return skipped_ + pos_; }
  /// The text not yet returned by next().
  std::string_view rest() const { return text_.substr(pos_); }
  /// Whether next() would return false.
  bool done() const { return pos_ >= text_.size(); }

 private:
  std::string_view text_;
  std::size_t skipped_ = 0;  // BOM bytes before text_
  std::size_t pos_ = 0;
  std::uint64_t line_ = 0;
};

/// Strips a leading UTF-8 byte-order mark.
std::string_view strip_bom(std::string_view text);

inline bool is_blank_char(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
/// Removes spaces, tabs (and stray \r, \v, \f) on both sides.
std::string_view trim(std::string_view s);
inline bool is_blank(std::string_view s) { return trim(s).empty(); }

/// Case-insensitive ASCII equality.
bool iequals(std::string_view a, std::string_view b);
/// Case-insensitive ASCII prefix test.
bool istarts_with(std::string_view s, std::string_view prefix);

/// Outcome of parse_float.
enum class NumStatus {
  Ok,          ///< a finite float was stored
  Empty,       ///< the (trimmed) text is empty
  NotNumber,   ///< not a decimal number
  NaN,         ///< "nan" in any spelling
  Inf,         ///< "inf"/"infinity" in any spelling
  OutOfRange,  ///< a number whose magnitude exceeds FLT_MAX
};

/// Parses the whole of `s` (already trimmed) as a finite float; -0 becomes +0. Values
/// whose magnitude is below the smallest float round to 0.
NumStatus parse_float(std::string_view s, float& out);

/// True for the statuses that denote something numeric-looking (Ok, NaN, Inf,
/// OutOfRange): used by the CSV header heuristic, so that a NaN on line 1 is reported as
/// such rather than taken for a header.
inline bool looks_numeric(NumStatus s) {
  return s != NumStatus::Empty && s != NumStatus::NotNumber;
}

/// Parses a decimal integer (optional sign, digits only) that fits in int64.
bool parse_int64(std::string_view s, long long& out);
/// If `s` is an integer (optional sign, one or more digits) returns its canonical decimal
/// spelling (no '+', no leading zeros, "-0" → "0"); otherwise returns `s` unchanged.
std::string canonical_integer(std::string_view s);

/// `s` for an error message: single-quoted, at most ~40 characters (then "..."),
/// control and non-ASCII bytes escaped as \xNN so the message stays one line.
std::string quote_text(std::string_view s);

/// "source:line: " / "source:line:col: " prefixes.
std::string where(const std::string& source, std::uint64_t line);
std::string where(const std::string& source, std::uint64_t line, std::size_t column);

/// Throws flynn::Error "<source>:<line>:<col>: <what the status means for `text`>".
[[noreturn]] void throw_bad_number(const std::string& source, std::uint64_t line,
                                   std::size_t column, std::string_view text, NumStatus status);

/// Maps label strings to provisional ids in first-seen order, then renumbers them into
/// LabelSet::sorted order. Names are stored in their canonical_label spelling, so every
/// format normalises labels the same way. Lookups take a string_view and allocate only
/// for new spellings.
class LabelInterner {
 public:
  /// The provisional id of `name` (added when new).
  std::uint32_t intern(std::string_view name);
  /// Builds the sorted LabelSet and rewrites provisional ids in `labels` into its ids.
  LabelSet finish(std::vector<std::uint32_t>& labels) const;
  std::size_t size() const { return names_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> ids_;  // by spelling
  std::unordered_map<std::string, std::uint32_t> canonical_ids_;                // by canonical name
  std::vector<std::string> names_;                                              // canonical names
  // Cache of the last lookup: consecutive rows often share a label.
  std::string last_name_;
  std::uint32_t last_id_ = 0;
  bool has_last_ = false;
};

/// n_rows × n_features, or throws flynn::Error (naming `source`) when it overflows or
/// exceeds `max_values`.
std::uint64_t checked_cells(std::uint64_t n_rows, std::uint64_t n_features,
                            std::uint64_t max_values, const std::string& source);

}  // namespace flynn::io::detail
