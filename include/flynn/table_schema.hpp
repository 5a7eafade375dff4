#pragma once
// What a model remembers about the table it was trained on: the feature columns' names,
// which columns were categorical (and their categories), and the training means used to
// fill missing values. Stored in the model file (format 3) so that prediction can match
// columns by name, one-hot encode categories the same way and impute the same values.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flynn {

/// How missing cells (see is_missing_cell) in feature columns are handled.
enum class MissingPolicy {
  Error,  ///< a missing cell is an error naming the file, line and column
  Mean,   ///< filled with the training mean of its feature (default)
  Zero,   ///< filled with 0
};

/// Parses "error", "mean", "zero" (any case); throws flynn::Error on anything else.
MissingPolicy parse_missing_policy(std::string_view text);
/// "error", "mean", "zero".
const char* missing_policy_name(MissingPolicy policy);

/// True for the spellings of a missing cell in a table: the empty (or all-blank) cell,
/// "NA", "?", "nan" (any case, so "NaN" and "NAN" too). The text is the cell after
/// unquoting; surrounding spaces and tabs are ignored.
bool is_missing_cell(std::string_view text);

/// One feature column of the training table, in the order the model's features come.
struct TableColumn {
  /// The header (CSV) or attribute (ARFF) name; empty when the file had no names.
  std::string name;
  /// Empty for a numeric column (one feature). Otherwise the column was categorical and is
  /// one-hot encoded: one feature per category, in this order (sorted for a CSV text
  /// column, declared for an ARFF nominal attribute); a cell holding
  /// category k sets feature k of the block to 1 and the others to 0; an unseen category
  /// or a missing cell gives an all-zero block.
  std::vector<std::string> categories;

  /// More categories than this in one column is an error (one-hot would explode): a CSV
  /// text column, an ARFF nominal attribute or a public schema's column.
  static constexpr std::size_t kMaxCategories = 256;

  bool categorical() const { return !categories.empty(); }
  /// Features this column occupies: 1, or the number of categories.
  std::size_t width() const { return categories.empty() ? 1 : categories.size(); }
  bool operator==(const TableColumn&) const = default;
};

/// The table behind a model's features. Empty (no columns) for data read by position
/// without anything to remember (LIBSVM, IDX, headerless all-numeric tables without
/// missing values): such models match columns by position, as flynn always did.
struct TableSchema {
  /// The feature columns in model order. Their widths add up to the model's d.
  std::vector<TableColumn> columns;
  /// Whether the columns carry names (the file had a header / attribute names): then
  /// prediction matches columns by name and reorders them.
  bool named = false;
  /// The training table's label column name ("" when unnamed): at prediction a column of
  /// this name is read as the (optional) label.
  std::string label_name;
  /// The training table's id column name ("" when none or unnamed): at prediction a
  /// column of this name is passed through as the row id.
  std::string id_name;
  /// Per feature (size d, or empty): the training mean of the feature over its
  /// non-missing cells, used to fill missing cells under MissingPolicy::Mean. Computed
  /// exactly from integer sums (ImputationSums), so it does not depend on how the rows
  /// were split among threads or parties.
  std::vector<float> fill;

  bool empty() const { return columns.empty(); }
  /// Sum of the columns' widths: the model's d when not empty.
  std::size_t n_features() const;
  /// True when any column is categorical.
  bool has_categorical() const;
  /// The first feature index of each column (size columns.size() + 1, last = n_features()).
  std::vector<std::size_t> offsets() const;
  /// The display name of feature `j` ("age", "color=red", or "feature 3" when unnamed).
  std::string feature_name(std::size_t j) const;
  bool operator==(const TableSchema&) const = default;
};

}  // namespace flynn
