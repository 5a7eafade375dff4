// CSV parser (see loaders.hpp for the accepted dialect).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "core/io/text_scanner.hpp"

namespace flynn::io {

using namespace detail;

namespace {

// Trim for CSV fields: spaces and tabs, except the delimiter itself (a tab delimiter must
// keep empty fields).
std::string_view trim_field(std::string_view s, char delim) {
  auto blank = [delim](char c) { return c != delim && is_blank_char(c); };
  std::size_t b = 0, e = s.size();
  while (b < e && blank(s[b])) ++b;
  while (e > b && blank(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// Splits one line into trimmed fields. A quoted field is returned with its quotes (so the
// caller can tell it was quoted); see unquote(). Throws on an unterminated quote or text
// after a closing quote.
void split_line(std::string_view line, char delim, std::vector<std::string_view>& fields,
                const std::string& source, std::uint64_t line_no) {
  fields.clear();
  if (std::memchr(line.data(), '"', line.size()) == nullptr) {
    // Fast path: no quotes anywhere.
    std::size_t start = 0;
    while (true) {
      const void* hit = std::memchr(line.data() + start, delim, line.size() - start);
      const std::size_t end =
          hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - line.data()) : line.size();
      fields.push_back(trim_field(line.substr(start, end - start), delim));
      if (!hit) return;
      start = end + 1;
    }
  }
  auto blank = [delim](char c) { return c != delim && is_blank_char(c); };
  std::size_t i = 0;
  const std::size_t n = line.size();
  while (true) {
    while (i < n && blank(line[i])) ++i;
    if (i < n && line[i] == '"') {
      const std::size_t open = i;
      std::size_t j = i + 1;
      while (true) {
        if (j >= n) {
          throw Error(where(source, line_no, fields.size() + 1) +
                      "unterminated quoted field (quoted fields cannot span lines)");
        }
        if (line[j] == '"') {
          if (j + 1 < n && line[j + 1] == '"') {
            j += 2;
            continue;
          }
          break;
        }
        ++j;
      }
      fields.push_back(line.substr(open, j + 1 - open));
      i = j + 1;
      while (i < n && blank(line[i])) ++i;
      if (i < n && line[i] != delim) {
        throw Error(where(source, line_no, fields.size()) + "unexpected " +
                    quote_text(line.substr(i, 1)) + " after a closing quote");
      }
    } else {
      std::size_t j = i;
      while (j < n && line[j] != delim) ++j;
      fields.push_back(trim_field(line.substr(i, j - i), delim));
      i = j;
    }
    if (i >= n) return;
    ++i;  // skip the delimiter; a trailing delimiter yields a final empty field
    if (i == n) {
      fields.emplace_back();
      return;
    }
  }
}

bool is_quoted(std::string_view f) { return f.size() >= 2 && f.front() == '"' && f.back() == '"'; }

// The text of a field: quotes removed and "" collapsed (into `scratch` only when needed).
std::string_view unquote(std::string_view f, std::string& scratch) {
  if (!is_quoted(f)) return f;
  std::string_view inner = f.substr(1, f.size() - 2);
  if (inner.find('"') == std::string_view::npos) return inner;
  scratch.clear();
  for (std::size_t k = 0; k < inner.size(); ++k) {
    scratch += inner[k];
    if (inner[k] == '"' && k + 1 < inner.size() && inner[k + 1] == '"') ++k;
  }
  return scratch;
}

// A numeric field: unquoted and trimmed inside the quotes as well.
std::string_view number_text(std::string_view f) {
  return is_quoted(f) ? trim(f.substr(1, f.size() - 2)) : f;
}

char detect_delimiter(std::string_view line) {
  std::size_t comma = 0, semi = 0, tab = 0;
  bool in_quotes = false;
  for (char c : line) {
    if (c == '"') in_quotes = !in_quotes;  // "" toggles twice: stays correct
    if (in_quotes) continue;
    if (c == ',')
      ++comma;
    else if (c == ';')
      ++semi;
    else if (c == '\t')
      ++tab;
  }
  if (semi > comma && semi >= tab) return ';';
  if (tab > comma && tab > semi) return '\t';
  return ',';
}

std::string delimiter_name(char d) {
  if (d == '\t') return "tab";
  return std::string("'") + d + "'";
}

}  // namespace

namespace {

// The text of every field of a row (unquoted; scratch holds the un-doubled quotes).
void cells_of(const std::vector<std::string_view>& fields, std::vector<std::string>& scratch,
              std::vector<std::string_view>& cells) {
  if (scratch.size() < fields.size()) scratch.resize(fields.size());
  cells.resize(fields.size());
  for (std::size_t j = 0; j < fields.size(); ++j) cells[j] = unquote(fields[j], scratch[j]);
}

// Text in a table cell for the header heuristic: not a number (NaN/Inf count as numbers,
// so that they are reported as such rather than taken for a header) and not missing.
bool is_text_cell(std::string_view field) {
  float tmp;
  const std::string_view t = number_text(field);
  return !is_missing_cell(t) && !looks_numeric(parse_float(t, tmp));
}

// Whether some column option names a column (then the file must have a header).
bool options_use_names(const LoadOptions& o) {
  using Kind = LabelColumn::Kind;
  return o.label_column.kind == Kind::Name || o.id_column.kind == Kind::Name ||
         o.feature_columns.uses_names() || o.ignore_columns.uses_names();
}

}  // namespace

Dataset parse_csv(std::string_view text, const LoadOptions& options, const std::string& source) {
  using Kind = LabelColumn::Kind;
  LineScanner lines(text);
  std::string_view line;

  // First non-blank line: decides the delimiter, the column count and the header.
  bool found = false;
  while (lines.next(line)) {
    if (!is_blank(line)) {
      found = true;
      break;
    }
  }
  if (!found) throw Error(source + ": empty file");
  const std::uint64_t first_line_no = lines.line_number();
  const std::string_view first_line = line;
  const LineScanner after_first = lines;

  const char delim = options.delimiter ? options.delimiter : detect_delimiter(first_line);
  std::vector<std::string_view> first;
  split_line(first_line, delim, first, source, first_line_no);
  const std::size_t ncols = first.size();
  std::vector<std::string> first_names(ncols);
  {
    std::string scratch;
    for (std::size_t j = 0; j < ncols; ++j) first_names[j] = std::string(unquote(first[j], scratch));
  }
  const TableSchema* model_schema = options.schema;  // non-null: prediction
  const bool predicting = model_schema != nullptr;

  // Header decision.
  const LabelColumn& lc = options.label_column;
  bool header = false;
  if (options_use_names(options)) {
    if (options.header == LoadOptions::Header::No) {
      throw Error(source + ": " +
                  (lc.kind == Kind::Name ? "the label column is given by name (" + quote_text(lc.name) + ")"
                                         : std::string("a column is given by name")) +
                  " but the file is read without a header");
    }
    header = true;
  } else if (options.header == LoadOptions::Header::Yes) {
    header = true;
  } else if (options.header == LoadOptions::Header::Auto) {
    const bool model_named = predicting && model_schema->named && !model_schema->empty();
    bool all_model_names = model_named;
    if (model_named)
      for (const TableColumn& c : model_schema->columns)
        if (std::find(first_names.begin(), first_names.end(), c.name) == first_names.end())
          all_model_names = false;
    if (all_model_names) {
      header = true;
    } else {
      // Which columns are not features for this test: those given by number (a name
      // implies a header, decided above), and the label column where it is known.
      std::vector<bool> excluded(ncols, false);
      for (const auto& it : options.ignore_columns.items)
        for (std::size_t j = it.first; j <= it.last && j <= ncols; ++j)
          if (j >= 1) excluded[j - 1] = true;
      if (options.id_column.kind == Kind::Index) {
        const long k = options.id_column.index, n = static_cast<long>(ncols);
        if (k != 0 && k <= n && k >= -n) excluded[static_cast<std::size_t>(k > 0 ? k - 1 : n + k)] = true;
      }
      std::size_t others = 0;
      for (std::size_t j = 0; j < ncols; ++j) others += !excluded[j];
      std::size_t label_idx = ncols;
      const std::size_t expected = predicting && !model_schema->empty()
                                       ? model_schema->columns.size()
                                       : options.expected_features.value_or(ncols + 1);
      if (lc.kind == Kind::Last && others != expected) {
        label_idx = ncols - 1;
      } else if (lc.kind == Kind::Index) {
        const long k = lc.index, n = static_cast<long>(ncols);
        if (k != 0 && k <= n && k >= -n) label_idx = static_cast<std::size_t>(k > 0 ? k - 1 : n + k);
      }
      std::vector<std::size_t> text_cols;
      for (std::size_t j = 0; j < ncols; ++j)
        if (!excluded[j] && j != label_idx && is_text_cell(first[j])) text_cols.push_back(j);
      // The next data line, if any.
      LineScanner peek = after_first;
      std::string_view next;
      std::vector<std::string_view> f2;
      bool has_next = false;
      while (peek.next(next)) {
        if (is_blank(next)) continue;
        split_line(next, delim, f2, source, peek.line_number());
        has_next = true;
        break;
      }
      float tmp;
      if (!text_cols.empty()) {
        // Text on line 1 is a header unless the same columns hold text on line 2 as well
        // (categorical or id columns of a headerless table).
        header = true;
        if (has_next && f2.size() == ncols &&
            std::all_of(text_cols.begin(), text_cols.end(),
                        [&](std::size_t j) { return is_text_cell(f2[j]); }))
          header = false;
      } else if (label_idx < ncols &&
                 !looks_numeric(parse_float(number_text(first[label_idx]), tmp))) {
        // "1,2,class" vs "1,2,cat": a header iff the next row's label is a number.
        header = has_next && label_idx < f2.size() &&
                 looks_numeric(parse_float(number_text(f2[label_idx]), tmp));
      }
    }
  }

  const std::vector<std::string> no_names;
  const std::vector<std::string>& names = header ? first_names : no_names;
  const TableLayout layout = resolve_table_layout(names, ncols, options, source, first_line_no);
  const bool labelled = layout.labelled();
  if (labelled && ncols < 2) {
    throw Error(where(source, first_line_no) + "1 column (delimiter " + delimiter_name(delim) +
                "): need at least one feature column besides the label column");
  }

  Dataset ds;
  ds.source = source;
  ds.has_labels = labelled;
  // The schema rows are encoded with: the model's at prediction, else the one learned here
  // (numeric columns first; categorical ones once text shows up in a column).
  const bool model_columns = predicting && !model_schema->empty();
  TableSchema schema = model_columns ? *model_schema : numeric_schema(layout, names);
  if (model_columns) {
    schema.id_name = layout.id != TableLayout::npos && header ? names[layout.id] : std::string();
  }

  LabelInterner interner;
  std::vector<std::string_view> fields, cells;
  std::vector<std::string> scratch;
  fields.reserve(ncols);
  auto check_ragged = [&](const std::vector<std::string_view>& f, std::uint64_t line_no) {
    if (f.size() != ncols) {
      throw Error(where(source, line_no) + std::to_string(f.size()) +
                  (f.size() == 1 ? " field" : " fields") + ", expected " + std::to_string(ncols) +
                  " (ragged row)");
    }
  };
  // Every data row, in order: (cells, line).
  auto for_each_row = [&](auto&& visit) {
    if (!header) {
      cells_of(first, scratch, cells);
      visit(cells, first_line_no);
    }
    LineScanner rows = after_first;
    std::string_view l;
    while (rows.next(l)) {
      if (is_blank(l)) continue;
      split_line(l, delim, fields, source, rows.line_number());
      check_ragged(fields, rows.line_number());
      cells_of(fields, scratch, cells);
      visit(cells, rows.line_number());
    }
  };
  auto encode_all = [&](TableRowEncoder::Mode mode) {
    const TableRowEncoder encoder(layout, schema, options.missing, source, mode);
    const std::size_t d = encoder.n_features();
    ds.n_features = d;
    ds.n_rows = 0;
    ds.features.clear();
    ds.labels.clear();
    ds.row_origin.clear();
    ds.row_ids.clear();
    interner = LabelInterner();
    // Reserve: at most one row per line, and every value takes at least two bytes.
    const std::size_t est_rows =
        static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    ds.features.reserve(std::min(est_rows * d, text.size() / 2 + d));
    ds.row_origin.reserve(std::min(est_rows, text.size() / 2 + 1));
    if (labelled) ds.labels.reserve(ds.row_origin.capacity());
    for_each_row([&](const std::vector<std::string_view>& c, std::uint64_t line_no) {
      if (labelled) {
        const std::string_view name = c[layout.label];
        if (name.empty()) throw Error(where(source, line_no, layout.label + 1) + "empty label");
        ds.labels.push_back(interner.intern(name));
      }
      if (layout.id != TableLayout::npos) ds.row_ids.emplace_back(c[layout.id]);
      const std::size_t at = ds.features.size();
      ds.features.resize(at + d);
      encoder.encode(c, line_no, ds.features.data() + at);
      ds.row_origin.push_back(line_no);
      ++ds.n_rows;
    });
  };

  if (!header) check_ragged(first, first_line_no);
  if (predicting) {
    // impute = false: missing cells the model has no means for stay NaN for the caller.
    encode_all(options.impute || !schema.fill.empty() ? TableRowEncoder::Mode::Prediction
                                                      : TableRowEncoder::Mode::Training);
  } else {
    try {
      encode_all(TableRowEncoder::Mode::Discovering);
    } catch (const TextInNumericColumn&) {
      // Some feature column holds text: find the categorical columns and their
      // categories in one pass, then encode again with them.
      TableSchemaBuilder builder(layout, names, source);
      std::uint64_t rows = 0;
      for_each_row([&](const std::vector<std::string_view>& c, std::uint64_t line_no) {
        builder.observe(c, line_no);
        ++rows;
      });
      schema = builder.finish();
      // One-hot blocks are the one place where a table's dense size can outgrow its text
      // (many text columns with many categories): bounded like sparse rows.
      const std::uint64_t limit = options.max_values ? options.max_values : sparse_value_limit(text.size());
      if (rows * schema.n_features() > limit) {
        throw Error(source + ": " + std::to_string(rows) + " rows x " +
                    std::to_string(schema.n_features()) +
                    " features after one-hot encoding the text columns is too large to load (limit " +
                    std::to_string(limit) + " values for this input); leave text columns out with "
                    "--ignore-cols");
      }
      encode_all(TableRowEncoder::Mode::Training);
    }
  }
  if (ds.n_rows == 0) throw Error(source + ": no data rows (only a header line)");
  if (labelled) ds.classes = interner.finish(ds.labels);

  if (model_columns) {
    ds.schema = std::move(schema);
  } else if (!predicting) {
    ds.schema = std::move(schema);
    if (options.missing == MissingPolicy::Mean) {
      if (options.impute) complete_table(ds, ImputationSums::of(ds));
    } else if (!schema_worth_keeping(ds.schema, 0)) {
      ds.schema = {};
    }
  }
  return ds;
}

}  // namespace flynn::io
