#include "flynn/io/memory_table.hpp"

#include <cmath>
#include <string_view>

#include "flynn/error.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/table_columns.hpp"
#include "core/io/table_encoder.hpp"

namespace flynn::io {

using namespace detail;

namespace {

// The cells a numeric column shows the schema builder and the encoder: a missing cell
// ("NaN", as the message of MissingPolicy::Error then shows it) or some number. The number
// itself never comes from the text: it is written over the encoder's output afterwards (a
// float32 value as it is, where the CSV reader parses the decimal text to the nearest
// float32).
constexpr std::string_view kMissingNumber = "NaN";
constexpr std::string_view kSomeNumber = "0";

/// A table's columns must agree with its row count and names (a caller's mistake, not a
/// data error: Python checks them first with its own messages).
void check_shape(const MemoryTable& t) {
  if (t.columns.empty()) throw Error(t.source + ": the table has no columns");
  if (!t.names.empty() && t.names.size() != t.columns.size())
    throw Error(t.source + ": " + std::to_string(t.names.size()) + " column names for " +
                std::to_string(t.columns.size()) + " columns");
  for (std::size_t j = 0; j < t.columns.size(); ++j) {
    const MemoryTable::Column& c = t.columns[j];
    if (c.numeric ? (c.values == nullptr && t.n_rows > 0) : c.cells.size() != t.n_rows)
      throw Error(t.source + ": column " + std::to_string(j + 1) + " does not have " +
                  std::to_string(t.n_rows) + " rows");
  }
}

/// Row r's cells as the table encoder takes them (one per column); whether a numeric cell
/// of the row is missing.
bool row_cells(const MemoryTable& t, std::size_t r, std::vector<std::string_view>& out) {
  out.resize(t.columns.size());
  bool missing_number = false;
  for (std::size_t j = 0; j < t.columns.size(); ++j) {
    const MemoryTable::Column& c = t.columns[j];
    if (!c.numeric) {
      out[j] = c.cells[r];
      continue;
    }
    const float v = c.value(r);
    if (std::isinf(v))
      throw Error(t.source + ":" + std::to_string(r + 1) + ":" + std::to_string(j + 1) +
                  ": infinite value (a feature must be finite; NaN marks a missing one)");
    const bool missing = std::isnan(v);
    missing_number |= missing;
    out[j] = missing ? kMissingNumber : kSomeNumber;
  }
  return missing_number;
}

/// Every column is a feature (the labels come separately). With a model's schema, its
/// columns are matched by name when both have names, by position otherwise (the CLI's
/// rule).
TableLayout memory_layout(const MemoryTable& t, const TableSchema* model_schema) {
  LoadOptions options;
  options.label_column.kind = LabelColumn::Kind::None;
  options.schema = model_schema;
  return resolve_table_layout(t.names, t.columns.size(), options, t.source, 0);
}

/// Encodes every row of `t` (n_rows × schema.n_features()). Rows the encoder has nothing
/// to decide for (all numeric, none missing, no categorical column) are copied as they
/// are; the others go through the encoder, and their present numeric values are then
/// written over its placeholder numbers.
Dataset encode_rows(const MemoryTable& t, const TableLayout& layout, const TableSchema& schema,
                    MissingPolicy policy, TableRowEncoder::Mode mode) {
  // Bounded as the file loaders bound one-hot blocks, by sparse_value_limit of its size.
  check_one_hot_size(t.n_rows, schema.n_features(), sparse_value_limit(t.bytes()), t.source,
                     /*in_memory=*/true);
  const TableRowEncoder encoder(layout, schema, policy, t.source, mode);
  const std::size_t d = encoder.n_features();
  const std::vector<std::size_t> offsets = schema.offsets();
  const bool every_row_encoded = t.has_text() || schema.has_categorical();
  Dataset data;
  data.source = t.source;
  data.n_rows = t.n_rows;
  data.n_features = d;
  data.features.assign(t.n_rows * d, 0.0f);
  std::vector<std::string_view> cells;
  for (std::size_t r = 0; r < t.n_rows; ++r) {
    float* out = data.row(r);
    const bool missing_number = row_cells(t, r, cells);
    if (every_row_encoded || missing_number) encoder.encode(cells, r + 1, out);
    for (std::size_t k = 0; k < layout.features.size(); ++k) {
      const MemoryTable::Column& c = t.columns[layout.features[k]];
      if (!c.numeric || schema.columns[k].categorical()) continue;
      const float v = c.value(r);
      if (!std::isnan(v)) out[offsets[k]] = v;
    }
  }
  return data;
}

}  // namespace

std::uint64_t MemoryTable::bytes() const {
  std::uint64_t total = 0;
  for (const Column& c : columns) {
    if (c.numeric) {
      total += 8 * static_cast<std::uint64_t>(n_rows);
    } else {
      for (const std::string& cell : c.cells) total += cell.size() + 1;
    }
  }
  return total;
}

bool MemoryTable::has_text() const {
  for (const Column& c : columns)
    if (!c.numeric) return true;
  return false;
}

Dataset encode_training_table(const MemoryTable& t, const std::string& label_name,
                              MissingPolicy policy) {
  check_shape(t);
  if (t.n_rows == 0) throw Error(t.source + ": the table has no rows");
  const TableLayout layout = memory_layout(t, nullptr);
  TableSchema schema;
  if (t.has_text()) {
    TableSchemaBuilder builder(layout, t.names, t.source);
    std::vector<std::string_view> cells;
    for (std::size_t r = 0; r < t.n_rows; ++r) {
      row_cells(t, r, cells);
      builder.observe(cells, r + 1);
    }
    schema = builder.finish();
  } else {
    schema = numeric_schema(layout, t.names);
  }
  // The CLI stores the label column's header name with a named schema.
  if (schema.named) schema.label_name = label_name;
  Dataset data = encode_rows(t, layout, schema, policy, TableRowEncoder::Mode::Training);
  if (policy == MissingPolicy::Mean) {
    data.schema = std::move(schema);
    // As parse_csv: the table's own means fill its missing cells and become the schema's
    // fill values (or the schema goes, when there is nothing to remember).
    complete_table(data, ImputationSums::of(data));
  } else if (schema_worth_keeping(schema, 0)) {
    // As the CSV parser under MissingPolicy::Zero / Error: a schema is kept for its names
    // or categories only.
    data.schema = std::move(schema);
  }
  return data;
}

Dataset encode_table(const MemoryTable& t, const TableSchema& model_schema, MissingPolicy policy) {
  check_shape(t);
  const TableSchema* given = model_schema.empty() ? nullptr : &model_schema;
  const TableLayout layout = memory_layout(t, given);
  // A model without a schema reads its features by position, all numeric.
  const TableSchema schema = given ? model_schema : numeric_schema(layout, t.names);
  return encode_rows(t, layout, schema, policy, TableRowEncoder::Mode::Prediction);
}

}  // namespace flynn::io
