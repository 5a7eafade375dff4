// Column lists, column roles, categorical discovery, row encoding and completion for tables
// (table_columns.hpp; the internal table_encoder.hpp).
#include "flynn/io/table_columns.hpp"

#include <algorithm>
#include <cmath>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "core/io/column_number.hpp"
#include "core/io/table_encoder.hpp"
#include "core/io/text_scanner.hpp"

namespace flynn::io {

using namespace detail;

namespace {

constexpr std::size_t npos = TableLayout::npos;

bool parse_positive(std::string_view s, std::size_t& out) {
  long long v = 0;
  if (s.empty() || s.front() == '+' || s.front() == '-' || !parse_int64(s, v) || v <= 0) return false;
  out = static_cast<std::size_t>(v);
  return true;
}

std::string header_list(const std::vector<std::string>& names) {
  std::string r;
  for (std::size_t i = 0; i < names.size() && i < 12; ++i) r += (i ? "," : "") + names[i];
  if (names.size() > 12) r += ",...";
  return r;
}

// The 0-based column of a name in the header; npos when absent; an error when repeated.
std::size_t find_name(const std::vector<std::string>& names, const std::string& name,
                      const std::string& source, std::uint64_t line) {
  std::size_t hit = npos, hits = 0;
  for (std::size_t j = 0; j < names.size(); ++j)
    if (names[j] == name && hits++ == 0) hit = j;
  if (hits > 1)
    throw Error(where(source, line) + "column name " + quote_text(name) + " appears " +
                std::to_string(hits) + " times in the header");
  return hit;
}

// A single column given like --label-col / --id-col (LabelColumn), 0-based; npos for None.
std::size_t resolve_single(const LabelColumn& c, const std::vector<std::string>& names,
                           std::size_t ncols, const std::string& what, const std::string& source,
                           std::uint64_t line) {
  using Kind = LabelColumn::Kind;
  switch (c.kind) {
    case Kind::None: return npos;
    case Kind::Last: return ncols - 1;
    case Kind::Index: {
      const std::optional<std::size_t> j = detail::column_from_number(c.index, ncols);
      if (!j)
        throw Error(where(source, line) + what + " " + std::to_string(c.index) +
                    " is out of range (" + std::to_string(ncols) + " columns)");
      return *j;
    }
    case Kind::Name: {
      if (names.empty())
        throw Error(source + ": the " + what + " is given by name (" + quote_text(c.name) +
                    ") but the file is read without a header");
      const std::size_t j = find_name(names, c.name, source, line);
      if (j == npos)
        throw Error(where(source, line) + "no column named " + quote_text(c.name) +
                    " in the header (" + what + ")");
      return j;
    }
  }
  return npos;
}

std::string column_label(const std::vector<std::string>& names, std::size_t j) {
  return j < names.size() ? quote_text(names[j]) + " (column " + std::to_string(j + 1) + ")"
                          : "column " + std::to_string(j + 1);
}

}  // namespace

// ---- ColumnSelector ---------------------------------------------------------------------

bool ColumnSelector::uses_names() const {
  return std::any_of(items.begin(), items.end(), [](const Item& i) { return !i.name.empty(); });
}

ColumnSelector ColumnSelector::parse(const std::string& text, const std::string& flag) {
  ColumnSelector sel;
  if (trim(text).empty()) return sel;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item =
        trim(std::string_view(text).substr(start, comma == std::string::npos ? std::string::npos
                                                                             : comma - start));
    if (item.empty()) throw Error(flag + ": empty item in " + quote_text(text));
    Item it;
    std::size_t a = 0, b = 0;
    const std::size_t dash = item.find('-', 1);
    if (parse_positive(item, a)) {
      it.first = it.last = a;
    } else if (dash != std::string_view::npos && parse_positive(trim(item.substr(0, dash)), a) &&
               parse_positive(trim(item.substr(dash + 1)), b)) {
      if (b < a) throw Error(flag + ": range " + quote_text(item) + " runs backwards");
      it.first = a;
      it.last = b;
    } else if (item == "0" || item.front() == '-' || item.front() == '+') {
      throw Error(flag + ": " + quote_text(item) +
                  " is not a column: columns are numbered from 1 (or named)");
    } else {
      it.name = std::string(item);
    }
    sel.items.push_back(std::move(it));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sel;
}

std::vector<std::size_t> ColumnSelector::resolve(const std::vector<std::string>& names,
                                                 std::size_t ncols, const std::string& source,
                                                 const std::string& flag) const {
  std::vector<std::size_t> out;
  for (const Item& it : items) {
    if (!it.name.empty()) {
      if (names.empty())
        throw Error(source + ": " + flag + " names column " + quote_text(it.name) +
                    " but the file is read without a header (give column numbers, or --header yes)");
      const std::size_t j = find_name(names, it.name, source, 0);
      if (j == npos)
        throw Error(source + ": " + flag + ": no column named " + quote_text(it.name) +
                    " (the header has " + header_list(names) + ")");
      out.push_back(j);
      continue;
    }
    if (it.last > ncols)
      throw Error(source + ": " + flag + ": column " + std::to_string(it.last) +
                  " is out of range (" + std::to_string(ncols) + " columns)");
    for (std::size_t j = it.first; j <= it.last; ++j) out.push_back(j - 1);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// ---- layout (the rest up to "completion" is table_encoder.hpp's) --------------------------

namespace detail {

namespace {

using Kind = LabelColumn::Kind;

// What resolve_table_layout's phases read: the table's header, the options, where messages
// point, the model's columns at prediction, and which columns may hold features (every one
// not ignored and not the id, or only those of --feature-cols).
struct LayoutInput {
  const std::vector<std::string>& names;
  std::size_t ncols;
  const LoadOptions& options;
  const std::string& source;
  std::uint64_t line;
  const TableSchema* schema;  // the model's non-empty schema, or null
  bool by_name;               // the model's columns are matched by the header's names
  std::vector<bool> selectable;
  // The features the model expects, npos when not known (training).
  std::size_t expected() const { return schema ? schema->columns.size() : options.expected_features.value_or(npos); }
  bool explicit_label() const {
    return options.label_column.kind == Kind::Index || options.label_column.kind == Kind::Name;
  }
};

// The ignored columns and the id column.
void assign_ignored_and_id(TableLayout& layout, const LayoutInput& in) {
  for (std::size_t j : in.options.ignore_columns.resolve(in.names, in.ncols, in.source, "--ignore-cols"))
    layout.roles[j] = ColumnRole::Ignored;
  layout.id = resolve_single(in.options.id_column, in.names, in.ncols, "id column", in.source, in.line);
  if (layout.id == npos && in.schema && !in.schema->id_name.empty() && !in.names.empty())
    layout.id = find_name(in.names, in.schema->id_name, in.source, in.line);  // the training id, if present
  if (layout.id == npos) return;
  if (layout.roles[layout.id] == ColumnRole::Ignored && in.options.id_column.kind != Kind::None)
    throw Error(in.source + ": the id column " + column_label(in.names, layout.id) + " is also in --ignore-cols");
  layout.roles[layout.id] = ColumnRole::Id;
}

std::vector<bool> selectable_columns(const std::vector<std::string>& names, std::size_t ncols,
                                     const LoadOptions& options, const std::string& source) {
  if (options.feature_columns.empty()) return std::vector<bool>(ncols, true);
  std::vector<bool> selectable(ncols, false);
  for (std::size_t j : options.feature_columns.resolve(names, ncols, source, "--feature-cols")) selectable[j] = true;
  return selectable;
}

// --label-col last: the training label's name when matching by name; else the last column
// that is neither ignored nor the id, at prediction only when the table has one column more
// than the model's features.
std::size_t last_label(const TableLayout& layout, const LayoutInput& in) {
  if (in.by_name)
    return in.schema->label_name.empty() ? npos : find_name(in.names, in.schema->label_name, in.source, in.line);
  std::vector<std::size_t> candidates;
  for (std::size_t j = 0; j < in.ncols; ++j)
    if (layout.roles[j] == ColumnRole::Feature) candidates.push_back(j);
  if (candidates.empty()) return npos;
  std::size_t usable = 0;
  for (std::size_t j : candidates) usable += in.selectable[j];
  const std::size_t expected = in.expected();
  if (expected != npos && usable != expected && usable != expected + 1)
    throw Error(where(in.source, in.line) + std::to_string(in.ncols) + " columns, model expects " +
                std::to_string(expected) + " features (or " + std::to_string(expected + 1) + " with a label column)");
  return expected == npos || usable != expected ? candidates.back() : npos;
}

void assign_label(TableLayout& layout, const LayoutInput& in) {
  const LabelColumn& lc = in.options.label_column;
  const bool explicit_label = in.explicit_label();
  if (explicit_label) layout.label = resolve_single(lc, in.names, in.ncols, "label column", in.source, in.line);
  else if (lc.kind == Kind::Last) layout.label = last_label(layout, in);
  if (layout.label == npos) return;
  const std::string label = column_label(in.names, layout.label);
  if (layout.roles[layout.label] == ColumnRole::Id)
    throw Error(in.source + ": " + label + " cannot be both the label and the id column");
  if (layout.roles[layout.label] == ColumnRole::Ignored && explicit_label)
    throw Error(in.source + ": the label column " + label + " is also in --ignore-cols");
  if (!in.options.feature_columns.empty() && in.selectable[layout.label] && explicit_label)
    throw Error(in.source + ": the label column " + label + " is also in --feature-cols");
  layout.roles[layout.label] = ColumnRole::Label;
}

// Prediction with names on both sides: the model's columns, found in the header; any other
// feature column is an error unless --feature-cols leaves it out.
void assign_features_by_name(TableLayout& layout, const LayoutInput& in) {
  std::vector<bool> used(in.ncols, false);
  for (const TableColumn& c : in.schema->columns) {
    const std::size_t j = find_name(in.names, c.name, in.source, in.line);
    if (j == npos)
      throw Error(where(in.source, in.line) + "the model's feature column " + quote_text(c.name) +
                  " is not in the header (" + header_list(in.names) + ")");
    if (layout.roles[j] != ColumnRole::Feature)
      throw Error(in.source + ": the model's feature column " + quote_text(c.name) +
                  " cannot be the label, the id or ignored");
    layout.features.push_back(j);
    used[j] = true;
  }
  for (std::size_t j = 0; j < in.ncols; ++j) {
    if (layout.roles[j] != ColumnRole::Feature || used[j]) continue;
    if (!in.selectable[j]) {
      layout.roles[j] = ColumnRole::Ignored;
      continue;
    }
    throw Error(where(in.source, in.line) + "column " + column_label(in.names, j) +
                " is not one of the model's features; leave it out with --ignore-cols " + in.names[j]);
  }
}

// Every selectable column left, in file order, as many as the model expects.
void assign_features_by_position(TableLayout& layout, const LayoutInput& in) {
  for (std::size_t j = 0; j < in.ncols; ++j) {
    if (layout.roles[j] != ColumnRole::Feature) continue;
    if (!in.selectable[j]) {
      layout.roles[j] = ColumnRole::Ignored;
      continue;
    }
    layout.features.push_back(j);
  }
  const std::size_t expected = in.expected();
  const std::string at = where(in.source, in.line) + std::to_string(in.ncols) + " columns";
  if (expected != npos && layout.features.size() != expected) {
    if (in.explicit_label() && layout.features.size() + 1 == expected)
      throw Error(at + ", the model expects " + std::to_string(expected) +
                  " features: no room for the label column that was given");
    throw Error(at + ", model expects " + std::to_string(expected) + " features" +
                (in.options.label_column.kind == Kind::None
                     ? std::string(" (label column 'none')")
                     : " (or " + std::to_string(expected + 1) + " with a label column)"));
  }
  if (layout.features.empty())
    throw Error(at + ": no feature column is left besides the label, id and ignored columns");
}

}  // namespace

TableLayout resolve_table_layout(const std::vector<std::string>& names, std::size_t ncols,
                                 const LoadOptions& options, const std::string& source,
                                 std::uint64_t line) {
  const TableSchema* schema = options.schema && !options.schema->empty() ? options.schema : nullptr;
  LayoutInput in{names, ncols, options, source, line, schema, schema && schema->named && !names.empty(), {}};
  TableLayout layout;
  layout.roles.assign(ncols, ColumnRole::Feature);
  assign_ignored_and_id(layout, in);
  in.selectable = selectable_columns(names, ncols, options, source);
  assign_label(layout, in);
  if (in.by_name) assign_features_by_name(layout, in);
  else assign_features_by_position(layout, in);
  return layout;
}

TableSchema numeric_schema(const TableLayout& layout, const std::vector<std::string>& names) {
  TableSchema s;
  s.named = !names.empty();
  for (std::size_t j : layout.features) s.columns.push_back({s.named ? names[j] : std::string(), {}});
  if (s.named && layout.label != npos) s.label_name = names[layout.label];
  if (s.named && layout.id != npos) s.id_name = names[layout.id];
  return s;
}

// ---- categorical discovery ----------------------------------------------------------------

TableSchemaBuilder::TableSchemaBuilder(const TableLayout& layout, std::vector<std::string> names,
                                       std::string source)
    : layout_(layout), names_(std::move(names)), source_(std::move(source)),
      columns_(layout.features.size()) {}

void TableSchemaBuilder::observe(std::span<const std::string_view> cells, std::uint64_t line) {
  for (std::size_t k = 0; k < columns_.size(); ++k) {
    Column& c = columns_[k];
    const std::string_view t = trim(cells[layout_.features[k]]);
    if (is_missing_cell(t)) continue;
    ++c.present;
    float v;
    if (parse_float(t, v) != NumStatus::NotNumber) {
      if (c.numbers++ == 0) c.first_number_line = line;
      continue;
    }
    if (!c.text) {
      c.text = true;
      c.first_text = std::string(t);
      c.first_text_line = line;
    }
    if (c.overflow) continue;
    ++c.values[std::string(t)];
    c.overflow = c.values.size() > kMaxCategories;
    if (c.overflow) c.values.clear();
  }
}

TableSchema TableSchemaBuilder::finish() const {
  TableSchema s = numeric_schema(layout_, names_);
  for (std::size_t k = 0; k < columns_.size(); ++k) {
    const Column& c = columns_[k];
    if (!c.text) continue;
    const std::size_t j = layout_.features[k];
    const std::string what = column_label(names_, j);
    const std::string flag_arg = j < names_.size() ? names_[j] : std::to_string(j + 1);
    const std::string suggestion = "; if it is a row id, name it with --id-col " + flag_arg +
                                   " (passed through to predictions), or leave it out with "
                                   "--ignore-cols " + flag_arg;
    if (c.numbers > 0)
      throw Error(where(source_, c.first_text_line, j + 1) + quote_text(c.first_text) +
                  " is not a number (column " + what + " holds numbers in other rows, e.g. line " +
                  std::to_string(c.first_number_line) + "; a categorical column holds no numbers)" +
                  suggestion);
    if (c.overflow)
      throw Error(where(source_, c.first_text_line, j + 1) + "column " + what + " holds text (" +
                  quote_text(c.first_text) + ") with more than " +
                  std::to_string(kMaxCategories) + " different values, too many to one-hot encode" +
                  suggestion);
    if (c.values.size() == c.present && c.present > kIdentifierRows)
      throw Error(where(source_, c.first_text_line, j + 1) + "column " + what + " holds text (" +
                  quote_text(c.first_text) + ") with a different value in every row, like an identifier" +
                  suggestion);
    std::vector<std::string> cats;
    cats.reserve(c.values.size());
    for (const auto& [v, n] : c.values) cats.push_back(v);
    std::sort(cats.begin(), cats.end());
    s.columns[k].categories = std::move(cats);
  }
  return s;
}

// ---- encoding -----------------------------------------------------------------------------

TableRowEncoder::TableRowEncoder(const TableLayout& layout, const TableSchema& schema,
                                 MissingPolicy policy, std::string source, Mode mode)
    : layout_(layout), schema_(schema), policy_(policy), source_(std::move(source)), mode_(mode), offsets_(schema.offsets()), categories_(schema.columns.size()) {
  FLYNN_ASSERT(layout_.features.size() == schema.columns.size());
  for (std::size_t k = 0; k < schema.columns.size(); ++k)
    for (std::size_t i = 0; i < schema.columns[k].categories.size(); ++i)
      categories_[k].emplace(schema.columns[k].categories[i], i);
}

void TableRowEncoder::encode(std::span<const std::string_view> cells, std::uint64_t line,
                             float* out) const {
  for (std::size_t k = 0; k < layout_.features.size(); ++k) {
    const std::size_t j = layout_.features[k];
    const std::string_view t = trim(cells[j]);
    float* o = out + offsets_[k];
    const std::size_t width = offsets_[k + 1] - offsets_[k];
    const bool categorical = !categories_[k].empty();
    NumStatus st = NumStatus::Ok;
    // Numbers first: the common cell costs one parse, and only what is not a number is
    // compared with the missing-value spellings.
    if (!categorical && (st = parse_float(t, *o)) == NumStatus::Ok) continue;
    if (is_missing_cell(t)) {
      if (policy_ == MissingPolicy::Error)
        throw Error(where(source_, line, j + 1) + "missing value " + quote_text(t) +
                    " (--missing error; use --missing mean or zero to fill it)");
      if (categorical || policy_ == MissingPolicy::Zero) {
        std::fill(o, o + width, 0.0f);
      } else if (!schema_.fill.empty()) {
        *o = schema_.fill[offsets_[k]];
      } else if (mode_ == Mode::Prediction) {
        throw Error(where(source_, line, j + 1) + "missing value " + quote_text(t) +
                    ", and the model stores no training means to fill it with (it was trained "
                    "on a table without names or missing values, or with --missing zero/error); "
                    "use --missing zero");
      } else {
        *o = std::numeric_limits<float>::quiet_NaN();  // filled once the means are known
      }
      continue;
    }
    if (categorical) {
      std::fill(o, o + width, 0.0f);
      const auto it = categories_[k].find(t);
      if (it != categories_[k].end()) o[it->second] = 1.0f;  // unseen: all-zero block
      continue;
    }
    if (st == NumStatus::NotNumber) {
      if (mode_ == Mode::Discovering) throw TextInNumericColumn{};
      throw Error(where(source_, line, j + 1) + quote_text(t) +
                  " is not a number (the column is numeric; if it holds ids or text, name it "
                  "with --id-col or --ignore-cols)");
    }
    throw_bad_number(source_, line, j + 1, t, st);
  }
}

void check_one_hot_size(std::uint64_t rows, std::uint64_t features, std::uint64_t limit,
                        const std::string& source, bool in_memory) {
  std::uint64_t values = 0;
  if (!__builtin_mul_overflow(rows, features, &values) && values <= limit) return;
  throw Error(source + ": " + std::to_string(rows) + " rows x " + std::to_string(features) +
              " features after one-hot encoding the text columns is too large to " +
              (in_memory ? "encode" : "load") + " (limit " + std::to_string(limit) +
              " values for this " + (in_memory ? "table); leave text columns out"
                                               : "input); leave text columns out with --ignore-cols"));
}

}  // namespace detail

// ---- completion -----------------------------------------------------------------------------

bool schema_worth_keeping(const TableSchema& schema, std::uint64_t missing_cells) {
  return !schema.empty() && (schema.named || schema.has_categorical() || missing_cells > 0);
}

TableSchema completed_schema(TableSchema schema, const ImputationSums& sums) {
  if (!schema_worth_keeping(schema, sums.missing_cells())) return {};
  schema.fill = sums.means();
  return schema;
}

void complete_table(Dataset& data, const ImputationSums& sums) {
  if (data.schema.empty()) return;
  data.schema = completed_schema(std::move(data.schema), sums);
  // Without a schema there was no missing cell (schema_worth_keeping) to fill.
  if (!data.schema.empty()) fill_missing(data, data.schema.fill);
}

}  // namespace flynn::io
