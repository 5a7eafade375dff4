#pragma once
// Tables held in memory (a DataFrame's columns, as Python's FlyNNClassifier receives them)
// encoded into model features exactly as the same table written as CSV is encoded by
// `flynn train` and `flynn predict`: the same layout rules (names matched with a model's
// schema, by position otherwise), the same discovery of categorical columns (sorted
// categories; a column of distinct values or of more than TableColumn::kMaxCategories
// values refused), one-hot encoding, MissingPolicy and messages
// ("<source>:<row>:<column>: ...", both 1-based). The one difference from a CSV file: a
// numeric column's values are taken as the float32 values they are, not re-parsed from
// decimal text.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/table_schema.hpp"

namespace flynn::io {

/// A table by columns, every column a feature (the labels come separately). A numeric
/// column points at float32 values it does not own (they must outlive the calls below);
/// a text column holds its cells.
struct MemoryTable {
  struct Column {
    bool numeric = false;
    /// Numeric: row r's value is values[r * stride]; NaN is a missing cell, ±inf an error.
    const float* values = nullptr;
    std::ptrdiff_t stride = 1;
    /// Text: one cell per row ("" is a missing cell, as a CSV writes one).
    std::vector<std::string> cells;
    float value(std::size_t r) const { return values[static_cast<std::ptrdiff_t>(r) * stride]; }
  };
  std::size_t n_rows = 0;
  /// The column names, or empty when the table has none (columns then match by position).
  std::vector<std::string> names;
  std::vector<Column> columns;
  /// What messages call the table.
  std::string source = "X";

  /// What the table holds, in bytes: 8 per numeric cell (a float64 in a DataFrame), the
  /// text and a delimiter per text cell. The measure of input the one-hot bound uses
  /// (sparse_value_limit), at least what its CSV holds for the same cells.
  std::uint64_t bytes() const;
  bool has_text() const;
};

/// Training: the features (n_rows × d) and, in Dataset::schema, the table schema `flynn
/// train` learns from the same table as CSV whose label column is named `label_name`
/// (names, categorical columns and their sorted categories; under MissingPolicy::Mean the
/// training means as fill values and the missing cells filled with them; a schema with
/// nothing to remember is left empty). Labels are not set. Throws flynn::Error naming the
/// cell or column (an empty table, a bad cell, an identifier-like or too wide text column,
/// more one-hot values than sparse_value_limit(bytes())), as parse_csv does.
Dataset encode_training_table(const MemoryTable& table, const std::string& label_name,
                              MissingPolicy policy);

/// Prediction (and further training of a fitted model): the features of `table` under a
/// model's schema, as `flynn predict` encodes a CSV: its columns matched by name when both
/// have names, by position otherwise; its categories (an unseen one gives an all-zero
/// block); its fill values for missing cells under MissingPolicy::Mean (an error when it
/// has none). An empty `model_schema` (a model trained on positional data) reads every
/// column as numeric, by position.
Dataset encode_table(const MemoryTable& table, const TableSchema& model_schema, MissingPolicy policy);

}  // namespace flynn::io
