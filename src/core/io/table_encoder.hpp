#pragma once
// From a table's header and rows of text cells to model features, the same way for every
// table format (CSV, ARFF) and for whole-file and chunked readers:
//   1. resolve_table_layout: which file column is the label, the id, a feature, ignored
//      (--label-col, --id-col, --feature-cols, --ignore-cols; at prediction, the model's
//      TableSchema matches feature columns by name, or by position for unnamed tables);
//   2. TableSchemaBuilder (training only, when some column is not numeric): one pass over
//      the rows finds the categorical columns and their categories;
//   3. TableRowEncoder: each row's cells become the model's features (numbers parsed,
//      categories one-hot encoded, missing cells handled by the MissingPolicy).
// Cells are the text of each field after unquoting; messages name the file, the 1-based
// line and the 1-based file column.
// Internal to flynn::core: the loaders (CSV, ARFF, the row stream) and the in-memory
// tables (flynn/io/memory_table.hpp) use it; callers see the results (Dataset, TableSchema).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/imputation.hpp"
#include "flynn/table_schema.hpp"

namespace flynn::io {
struct LoadOptions;
}  // namespace flynn::io

namespace flynn::io::detail {

/// What each file column is for.
enum class ColumnRole : std::uint8_t { Feature, Label, Id, Ignored };

/// The roles of a table's columns and where each model column comes from.
struct TableLayout {
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
  std::vector<ColumnRole> roles;  ///< per file column
  std::size_t label = npos;       ///< 0-based file column of the label, npos when unlabelled
  std::size_t id = npos;          ///< 0-based file column of the row id, npos when none
  /// For each model column (TableSchema::columns order): its 0-based file column.
  std::vector<std::size_t> features;
  bool labelled() const { return label != npos; }
};

/// Decides the layout of a table with `ncols` columns whose header is `names` (empty when
/// the file has no header). With options.schema (prediction) the feature columns are the
/// schema's: matched by name when both the schema and the file have names (a schema column
/// missing from the header, or a header column that is neither a model feature, the label,
/// the id nor ignored, is an error naming it), by position otherwise. Without it
/// (training) every column that is not the label, the id or ignored is a feature (only
/// --feature-cols' columns when given). The label is options.label_column (Last: the last
/// column that is neither ignored nor the id; at prediction, a table with exactly the
/// model's feature columns is unlabelled, and a named one is labelled when it has the
/// training label's name). `line` is the header's (or first row's) line for messages.
TableLayout resolve_table_layout(const std::vector<std::string>& names, std::size_t ncols,
                                 const LoadOptions& options, const std::string& source,
                                 std::uint64_t line);

/// A schema whose columns are the layout's feature columns, all numeric, named after the
/// header when there is one (`names` non-empty); label_name / id_name from the header.
TableSchema numeric_schema(const TableLayout& layout, const std::vector<std::string>& names);

/// Training: finds which feature columns are categorical (some non-missing cell is not a
/// number) and collects their categories. Feed it every data row, then call finish().
class TableSchemaBuilder {
 public:
  /// More categories than this in one column is an error (one-hot would explode).
  static constexpr std::size_t kMaxCategories = TableColumn::kMaxCategories;
  /// A text column with a different value in every row and more rows than this is taken
  /// for an identifier (an error suggesting --id-col / --ignore-cols).
  static constexpr std::size_t kIdentifierRows = 16;

  TableSchemaBuilder(const TableLayout& layout, std::vector<std::string> names,
                     std::string source);
  /// Looks at one row (one text cell per file column).
  void observe(std::span<const std::string_view> cells, std::uint64_t line);
  /// The schema: numeric columns, and categorical ones (no cell a number) with their
  /// sorted categories. Throws flynn::Error naming the cell when a column mixes numbers
  /// and text ("'abc' is not a number", as for a typo in a numeric column), and naming
  /// the column when a text column looks like an identifier or has more than
  /// kMaxCategories values.
  TableSchema finish() const;

 private:
  struct Column {
    bool text = false;              // some non-missing cell is not a number
    std::uint64_t numbers = 0;      // non-missing cells that are numbers
    std::uint64_t first_number_line = 0;
    std::string first_text;         // that cell, for messages
    std::uint64_t first_text_line = 0;
    std::uint64_t present = 0;      // non-missing cells
    bool overflow = false;          // more than kMaxCategories distinct values
    std::unordered_map<std::string, std::uint64_t> values;  // distinct text cells
  };
  TableLayout layout_;
  std::vector<std::string> names_;
  std::string source_;
  std::vector<Column> columns_;  // per model column
};

/// Thrown by a TableRowEncoder in Mode::Discovering when a numeric column holds text:
/// the caller then builds the schema with TableSchemaBuilder and encodes again. A
/// flynn::Error, because it can leave RowStream::next (documented to throw only
/// flynn::Error) for a caller that streams a table without learning its schema first.
class TextInNumericColumn : public Error {
 public:
  TextInNumericColumn()
      : Error("a numeric column holds text: learn the table's schema first (a first pass "
              "over the file, as flynn train does)") {}
};

/// One-hot blocks are the one place where a table's dense size can outgrow its text (many
/// text columns with many categories): `rows` rows of `features` encoded features must fit
/// in `limit` values (sparse_value_limit of the input's bytes, or LoadOptions::max_values).
/// Throws flynn::Error naming `source`, the sizes and the limit otherwise; `in_memory`: the
/// table is an in-memory one (memory_table.hpp), whose text columns a caller leaves out
/// itself, else a file's (--ignore-cols).
void check_one_hot_size(std::uint64_t rows, std::uint64_t features, std::uint64_t limit,
                        const std::string& source, bool in_memory);

/// Turns rows of text cells into model features.
class TableRowEncoder {
 public:
  /// Training encodes with the schema being learned: missing cells under
  /// MissingPolicy::Mean become NaN (filled by complete_table once the training means are
  /// known). Prediction encodes with a model's schema: such cells take schema.fill, and
  /// when the model stores no means they are an error suggesting --missing zero.
  enum class Mode {
    Training,
    /// Training, with text in a numeric column throwing TextInNumericColumn instead of an
    /// error: the caller then builds the schema (TableSchemaBuilder) and encodes again.
    Discovering,
    Prediction,
  };
  TableRowEncoder(const TableLayout& layout, const TableSchema& schema, MissingPolicy policy,
                  std::string source, Mode mode);
  /// Features per row (schema.n_features()).
  std::size_t n_features() const { return offsets_.back(); }
  /// Writes the n_features() values of one row (one text cell per file column) to `out`.
  /// Throws flynn::Error "<source>:<line>:<column>: ..." on a bad number or, under
  /// MissingPolicy::Error, a missing cell.
  void encode(std::span<const std::string_view> cells, std::uint64_t line, float* out) const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using CategoryIndex = std::unordered_map<std::string, std::size_t, Hash, std::equal_to<>>;
  TableLayout layout_;
  const TableSchema& schema_;
  MissingPolicy policy_;
  std::string source_;
  Mode mode_;
  std::vector<std::size_t> offsets_;
  std::vector<CategoryIndex> categories_;  // per model column (empty map when numeric)
};

}  // namespace flynn::io::detail
