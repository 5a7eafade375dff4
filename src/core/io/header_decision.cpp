// The CSV header decision (see header_decision.hpp).
#include "core/io/header_decision.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/io/column_number.hpp"
#include "core/io/text_scanner.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/table_schema.hpp"

namespace flynn::io::detail {

namespace {

bool numeric_looking(std::string_view cell) {
  float tmp;
  return looks_numeric(parse_float(trim(cell), tmp));
}

// Text for the header heuristic: not a number (NaN/Inf count as numbers, so that they are
// reported as such rather than taken for a header) and not missing.
bool is_text(std::string_view cell) {
  return !is_missing_cell(cell) && !numeric_looking(cell);
}

// Up to three of line 1's cells in `cols`, quoted, for the note.
std::string examples(std::span<const std::string_view> first, const std::vector<std::size_t>& cols) {
  std::string r;
  for (std::size_t i = 0; i < cols.size() && i < 3; ++i)
    r += (i ? ", " : "") + quote_text(trim(first[cols[i]]));
  if (cols.size() > 3) r += ", ...";
  return r;
}

// Rule 1b: whether the rows below show line 1 to be a header although every text column
// of line 1 holds text on line 2 too. `cols`: line 1's text columns, the label's included.
bool header_by_lookahead(std::span<const std::string_view> first,
                         std::span<const std::vector<std::string_view>> below,
                         const std::vector<bool>& excluded, const std::vector<std::size_t>& cols) {
  const std::size_t ncols = first.size();
  // A header names each column once; a data row of categorical columns often repeats a
  // value (two columns holding 'a').
  std::unordered_set<std::string_view> seen;
  for (std::size_t j = 0; j < ncols; ++j)
    if (!excluded[j] && !seen.insert(trim(first[j])).second) return false;
  std::size_t rows = 0;
  for (const auto& r : below) rows += r.size() == ncols;
  std::size_t repeating = 0;
  for (std::size_t j : cols) {
    const std::string_view name = trim(first[j]);
    std::unordered_set<std::string_view> values;
    for (const auto& r : below) {
      if (r.size() != ncols) continue;
      const std::string_view v = trim(r[j]);
      if (v == name) return false;  // line 1's value is one of the column's values
      values.insert(v);
    }
    // Values that repeat make the column categorical-looking, so that a data row's value
    // would likely have been seen again.
    repeating += values.size() < rows;
  }
  return repeating >= 2;
}

}  // namespace

std::size_t header_lookahead_rows(std::size_t ncols) {
  return std::clamp<std::size_t>(kHeaderLookaheadCells / std::max<std::size_t>(ncols, 1), 1,
                                 kHeaderLookaheadRows);
}

HeaderDecision decide_header(std::span<const std::string_view> first,
                             std::span<const std::vector<std::string_view>> below,
                             const std::vector<bool>& excluded, std::size_t label,
                             bool complete) {
  const std::size_t ncols = first.size();
  HeaderDecision d;
  if (below.empty() && !complete) {
    d.need_more = true;  // every rule but "all numbers" looks at line 2: wait for it
    return d;
  }
  std::vector<std::size_t> text_cols;
  for (std::size_t j = 0; j < ncols; ++j)
    if (!excluded[j] && j != label && is_text(first[j])) text_cols.push_back(j);
  const std::vector<std::string_view>* line2 = below.empty() ? nullptr : &below.front();

  if (!text_cols.empty()) {
    // 1a. Text above a number (or a ragged line 2, or no line 2) makes line 1 a header.
    d.header = true;
    if (!line2 || line2->size() != ncols ||
        !std::all_of(text_cols.begin(), text_cols.end(),
                     [&](std::size_t j) { return is_text((*line2)[j]); }))
      return d;
    // 1b. Text over text: categorical columns of a headerless table, or the header of a
    // table whose columns are all text.
    if (!complete) {
      d.need_more = true;
      return d;
    }
    std::vector<std::size_t> cols = text_cols;
    if (label < ncols && is_text(first[label])) cols.push_back(label);
    std::size_t rows = 0;
    for (const auto& r : below) rows += r.size() == ncols;
    d.guessed = true;
    d.header = header_by_lookahead(first, below, excluded, cols);
    if (d.header) {
      d.reason = "line 1 is taken for a header: its text (" + examples(first, cols) +
                 ") occurs nowhere in its columns in the next " + std::to_string(rows) +
                 (rows == 1 ? " row" : " rows") +
                 ", whose values repeat; use --header no if it is data";
    } else {
      d.reason = "line 1 is read as data: its text (" + examples(first, text_cols) +
                 ") is in columns that hold text on line 2 too; use --header yes if it is a "
                 "header";
    }
    return d;
  }
  if (label < ncols && !numeric_looking(first[label])) {
    // 2. "1,2,class" vs "1,2,cat": a header iff the next row's label is a number.
    d.header = line2 && label < line2->size() && numeric_looking((*line2)[label]);
    if (d.header) {
      d.guessed = true;
      d.reason = "line 1 is taken for a header: its label " + quote_text(trim(first[label])) +
                 " is text above a number, although its other fields are numbers; use "
                 "--header no if it is data";
    }
    return d;
  }
  return d;  // 3. All numbers: data.
}

namespace {

// Whether some column option names a column (then the file must have a header).
bool options_use_names(const LoadOptions& o) {
  using Kind = LabelColumn::Kind;
  return o.label_column.kind == Kind::Name || o.id_column.kind == Kind::Name ||
         o.feature_columns.uses_names() || o.ignore_columns.uses_names();
}

}  // namespace

HeaderByOptions header_by_options(const LoadOptions& options, const TableSchema* model_schema,
                                  std::span<const std::string> first_names,
                                  const std::string& source) {
  using Kind = LabelColumn::Kind;
  const LabelColumn& lc = options.label_column;
  const std::size_t ncols = first_names.size();
  HeaderByOptions r;
  r.label = ncols;
  if (options_use_names(options)) {
    if (options.header == LoadOptions::Header::No) {
      throw Error(source + ": " +
                  (lc.kind == Kind::Name ? "the label column is given by name (" + quote_text(lc.name) + ")"
                                         : std::string("a column is given by name")) +
                  " but the file is read without a header");
    }
    r.header = true;
    return r;
  }
  if (options.header != LoadOptions::Header::Auto) {
    r.header = options.header == LoadOptions::Header::Yes;
    return r;
  }
  const bool predicting = model_schema != nullptr;
  if (predicting && model_schema->named && !model_schema->empty()) {
    bool all_model_names = true;
    for (const TableColumn& c : model_schema->columns)
      if (std::find(first_names.begin(), first_names.end(), c.name) == first_names.end())
        all_model_names = false;
    if (all_model_names) {
      r.header = true;
      return r;
    }
  }
  r.excluded.assign(ncols, false);
  for (const auto& it : options.ignore_columns.items)
    for (std::size_t j = it.first; j <= it.last && j <= ncols; ++j)
      if (j >= 1) r.excluded[j - 1] = true;
  if (options.id_column.kind == Kind::Index) {
    if (const auto id = column_from_number(options.id_column.index, ncols)) r.excluded[*id] = true;
  }
  std::size_t others = 0;
  for (std::size_t j = 0; j < ncols; ++j) others += !r.excluded[j];
  const std::size_t expected = predicting && !model_schema->empty()
                                   ? model_schema->columns.size()
                                   : options.expected_features.value_or(ncols + 1);
  // The last column is the label unless the other columns are exactly the features the
  // model (or --expected-features) wants: then the table has no label column.
  if (lc.kind == Kind::Last && others != expected) {
    r.label = ncols - 1;
  } else if (lc.kind == Kind::Index) {
    if (const auto label = column_from_number(lc.index, ncols)) r.label = *label;
  }
  return r;
}

}  // namespace flynn::io::detail
