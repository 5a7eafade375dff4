#pragma once
// A federation's feature set from public knowledge: which feature columns the parties'
// tables have, in which order, their names, the categories of their text columns, the
// label and id columns' names and, optionally, the values that fill missing cells.
//
// Why: without it each party learns its categories from its own rows (TableSchemaBuilder),
// so a category that occurs in one row of one party would travel in the agreement's
// fingerprint to the coordinator and every party, change d (which the refusal names), and
// sit in the released model. Under differential privacy that is an unprotected release
// of row data. With a public schema the categories, d and the model's table come from the
// schema file, every party reads its rows against it (public_schema_load_options) and the
// parties agree on it by digest, as they agree on --feature-stats.
//
// The rule (train_party enforces it on every transport, docs/guide/federated.md "Public schema
// under DP"):
//   * With DP, a party whose data has a categorical column (CSV text, ARFF nominal or
//     string attribute) needs a public schema (CLI: --schema FILE); without one the
//     federation is refused, naming the flag. All-numeric data needs none: its feature set
//     is the file's layout (header or column count, IDX dimensions), the same whatever
//     its rows hold. The CLI also requires --schema for LIBSVM data under DP, whose d is
//     the largest feature index found in the rows.
//   * Read against a schema, a cell whose category the schema does not list is encoded as
//     an all-zero block (as at prediction): it is neither an error nor named anywhere.
//   * Without DP a schema is optional; given, it fixes the categories all the same.
//
// File format (JSON, plain or gzip; unknown keys are errors):
//   {
//     "format": "flynn table schema", "version": 1,
//     "columns": [{"name": "age"}, {"name": "colour", "categories": ["blue", "red"]}],
//     "label": "class",        named tables: the label column's name (else --label-col)
//     "id": "patient",         optional: the id column's name
//     "fill": [41.5, 0, 0],    optional: one value per feature for missing cells
//     "features": 3            d; required when "columns" is absent (positional data)
//   }
// Either every column has a "name" (a named table: parties' columns are matched by name,
// in any order) or none has (matched by position). "categories" lists a text column's
// categories in model order (non-empty, distinct, at most 256, no surrounding spaces, not
// a missing-cell spelling). Without "columns" the data is positional: "features" numbers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "flynn/dataset.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/table_schema.hpp"

namespace flynn::federated {

/// A public schema (see the header comment).
struct PublicSchema {
  /// The table's columns, label/id names and fill values; empty for positional data,
  /// whose features are known by position only.
  TableSchema table;
  /// d: the number of features (table.n_features() when the table has columns).
  std::size_t features = 0;
  bool operator==(const PublicSchema&) const = default;
};

/// Parses the JSON file format. Throws flynn::Error naming `source` and the key or
/// column at fault. An unnamed table of numeric columns without fill values is the same
/// schema as {"features": d} (positional), and is returned as such.
PublicSchema parse_public_schema(std::string_view json, const std::string& source);

/// Reads (gunzipping when needed, at most `max_bytes`) and parses a schema file.
PublicSchema load_public_schema(const std::string& path,
                                std::uint64_t max_bytes = io::kDefaultMaxInputBytes);

/// The schema in the file format, pretty-printed (parse_public_schema reads it back equal).
std::string public_schema_json(const PublicSchema& schema);

/// The schema a public sample calls for: its table's columns and categories, label and id
/// names and d, as training on it would learn them; with `with_fill` also the sample's
/// means of the features' non-missing cells as fill values (the sample must be loaded with
/// LoadOptions::impute = false, or have no missing cells).
PublicSchema public_schema_of(const Dataset& sample, bool with_fill);

/// A short digest of the schema's exact content ("d=…, sha256=…"): what the parties
/// compare in the agreement step.
std::string public_schema_digest(const PublicSchema& schema);

/// `options` for reading a party's rows against `schema` (not copied: it must outlive
/// the load): its columns matched by name (or position), its categories, its fill values,
/// and d as the expected number of features.
io::LoadOptions public_schema_load_options(io::LoadOptions options, const PublicSchema& schema);

/// Throws flynn::Error unless `data` was read against `schema`: d equal and, for a table
/// schema, the same columns, categories, label name and fill values (the id column's name
/// may differ); for a positional schema no categorical column. The message names no value
/// of the rows.
void check_fits_public_schema(const Dataset& data, const PublicSchema& schema);

}  // namespace flynn::federated
