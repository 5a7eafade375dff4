#pragma once
// The parts of reading a table (CSV, ARFF) that callers see: a list of columns as the CLI
// spells it (--id-col, --ignore-cols, --feature-cols) and the completion of a table read
// under MissingPolicy::Mean (its missing cells filled with the training means). How rows
// of text cells become features (the layout of a table's columns, the discovery of its
// categorical columns, one-hot encoding) is internal to the loaders
// (src/core/io/table_encoder.hpp); flynn/io/memory_table.hpp encodes tables held in
// memory by the same rules.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/imputation.hpp"
#include "flynn/table_schema.hpp"

namespace flynn::io {

/// A list of columns as the CLI spells it: comma-separated items, each a 1-based column
/// number, a range "3-7" (inclusive), or a header name. A column whose name is an integer
/// or looks like a range must be given by position.
struct ColumnSelector {
  struct Item {
    std::string name;          ///< the header name, or empty for a number/range
    std::size_t first = 0;     ///< 1-based first column of a number/range
    std::size_t last = 0;      ///< 1-based last column (== first for a single number)
    bool operator==(const Item&) const = default;
  };
  std::vector<Item> items;

  bool empty() const { return items.empty(); }
  /// Whether some item is a name (so the file needs a header).
  bool uses_names() const;
  /// Parses the CLI text; `flag` (e.g. "--ignore-cols") names it in errors: empty items,
  /// 0, reversed ranges ("7-3") are errors. An empty text gives an empty selector.
  static ColumnSelector parse(const std::string& text, const std::string& flag);
  /// The 0-based file columns it names, ascending and without duplicates. `names` is the
  /// header (empty when the file has none). Throws flynn::Error naming `source`, the flag
  /// and the unknown name (listing the header) or the out-of-range number.
  std::vector<std::size_t> resolve(const std::vector<std::string>& names, std::size_t ncols,
                                   const std::string& source, const std::string& flag) const;
  bool operator==(const ColumnSelector&) const = default;
};

/// After loading a table under MissingPolicy::Mean with its missing cells left NaN:
/// stores `sums`' means in data.schema.fill (the data's own ImputationSums, or a
/// federation's all-reduced ones) and fills the NaN cells with them. A schema with nothing
/// to remember (see schema_worth_keeping) is dropped, so such data trains exactly as
/// positional data always did.
void complete_table(Dataset& data, const ImputationSums& sums);

/// The schema complete_table gives `schema` for data summed up in `sums` (without filling
/// any rows): the means as fill values, or an empty schema when there is nothing to keep.
TableSchema completed_schema(TableSchema schema, const ImputationSums& sums);

/// Whether a table's schema must be stored with a model: it has names or categorical
/// columns, or the training data had missing cells (whose fill values the model keeps).
bool schema_worth_keeping(const TableSchema& schema, std::uint64_t missing_cells);

}  // namespace flynn::io
