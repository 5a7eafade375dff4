#pragma once
// Internal: whether line 1 of a CSV table is a header (LoadOptions::Header::Auto), decided
// from line 1 and a bounded look-ahead of the rows below it. A pure function so that every
// column mix can be tested without files; the CSV parser gathers the rows and acts on the
// decision. Not part of the public API.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flynn {
struct TableSchema;
}
namespace flynn::io {
struct LoadOptions;
}

namespace flynn::io::detail {

/// Rows below line 1 the decision looks at, at most.
inline constexpr std::size_t kHeaderLookaheadRows = 64;
/// Cells of look-ahead at most (rows × columns), so that a very wide table keeps the
/// look-ahead small: the streaming reader holds these rows in memory.
inline constexpr std::size_t kHeaderLookaheadCells = std::size_t{1} << 16;

/// The look-ahead rows a table of `ncols` columns gets: kHeaderLookaheadRows, fewer for
/// wide tables (kHeaderLookaheadCells), at least 1 (line 2 always counts).
std::size_t header_lookahead_rows(std::size_t ncols);

struct HeaderDecision {
  bool header = false;
  /// The decision rests on a heuristic that can be wrong for this table (both readings
  /// were plausible): `reason` then says what was decided, why, and which --header
  /// option overrides it. False when the evidence is conclusive (a text field above a
  /// number, an all-numeric line 1) or there was nothing to decide.
  bool guessed = false;
  std::string reason;
  /// The decision needs rows that `below` does not hold yet (it was not `complete`): the
  /// caller reads more text and decides again. Only the rules that look past line 2 wait
  /// for the whole look-ahead, so a slow pipe of plain rows is not held up.
  bool need_more = false;
};

/// Decides whether line 1 is a header.
///   first:    line 1's cells (unquoted text), one per column;
///   below:    the non-blank rows after it, in order (at most header_lookahead_rows; empty
///             when the text ends after line 1), each as unquoted cells; a row with
///             another number of cells than `first` is ragged (it counts only as line 2,
///             where it makes line 1 a header, as before);
///   excluded: per column, true when the column is not looked at (ignored or id columns
///             given by number);
///   label:    the label column, or first.size() when unknown / none;
///   complete: `below` holds every row the look-ahead will get (header_lookahead_rows of
///             them, or all the text has).
/// Rules, in order:
///   1. Some feature cell of line 1 is text (not a number, not missing):
///      a. it is a header unless line 2 holds text in every such column;
///      b. when it does (categorical columns, or an all-text table), it is a header when
///         the look-ahead gives evidence a data row would not: line 1's cells are
///         distinct, none of its text cells (the label's included) occurs in its column
///         in the rows below, and at least two of those columns (or the label) repeat
///         values below — categorical columns whose line-1 value is never one of their
///         categories. Otherwise line 1 is data. Both outcomes of (b) are guesses.
///   2. Only the label cell of line 1 is text ("1,2,class" or "1,2,cat"): a header iff
///      line 2's label cell is a number (a guess when it is a header: its feature names
///      are numbers).
///   3. Line 1 is all numbers (or missing cells): data.
HeaderDecision decide_header(std::span<const std::string_view> first,
                             std::span<const std::vector<std::string_view>> below,
                             const std::vector<bool>& excluded, std::size_t label,
                             bool complete);

/// What the load options settle before the text is looked at.
struct HeaderByOptions {
  /// Set when the options decide (a column given by name, --header yes/no, or line 1
  /// holding every column name of the model's schema); unset: decide_header decides.
  std::optional<bool> header;
  /// For decide_header: the columns it does not look at (ignored or id columns given by
  /// number; a name implies a header, so only numbers remain) ...
  std::vector<bool> excluded;
  /// ... and the label column where it is known (first_names.size() when not).
  std::size_t label = 0;
};

/// The options' part of the header decision, for a table whose line 1 holds `first_names`
/// (unquoted). `model_schema` is the model's table at prediction (null in training): when
/// it is named and line 1 holds all its names, line 1 is a header. Throws flynn::Error when
/// a column is given by name but the table is read without a header. Pure.
HeaderByOptions header_by_options(const LoadOptions& options, const TableSchema* model_schema,
                                  std::span<const std::string> first_names,
                                  const std::string& source);

}  // namespace flynn::io::detail
