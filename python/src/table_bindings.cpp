#include "table_bindings.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "flynn/dataset.hpp"
#include "flynn/error.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/table_columns.hpp"
#include "flynn/table_schema.hpp"
#include "numpy_rows.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

// What the encoder's messages call the table: "X:<row>:<column>: ...", both 1-based, as
// the CLI's say "<file>:<line>:<column>: ...".
const std::string kSource = "X";

// The cells a numeric column shows the schema builder and the encoder: a missing cell
// ("NaN", as missing="error"'s message then shows it) or some number. The number itself
// never comes from the text: it is written over the encoder's output afterwards (a float32
// value as it is, where the CLI parses the decimal text pandas wrote to the nearest float32).
constexpr std::string_view kMissingNumber = "NaN";
constexpr std::string_view kSomeNumber = "0";

/// A table from Python, by position: every column numeric or text, all of n_rows rows.
/// Built with the GIL held; read without it (the arrays are kept alive here).
struct PyTable {
  struct Column {
    bool numeric = false;
    const float* values = nullptr;   // numeric: the first row's value
    std::ptrdiff_t stride = 0;       // numeric: elements from one row to the next
    std::vector<std::string> cells;  // text: one per row, "" for a missing cell
    float value(std::size_t r) const { return values[static_cast<std::ptrdiff_t>(r) * stride]; }
  };
  std::size_t n_rows = 0;
  std::vector<std::string> names;  // empty: the table has no column names
  std::vector<Column> columns;
  std::vector<py::array> arrays;   // the numeric columns' arrays, kept alive

  PyTable(const py::list& cols, const std::optional<std::vector<std::string>>& column_names) {
    if (cols.empty()) throw std::invalid_argument("the table has no columns");
    if (column_names) {
      if (column_names->size() != cols.size())
        throw std::invalid_argument(std::to_string(column_names->size()) + " column names for " +
                                    std::to_string(cols.size()) + " columns");
      names = *column_names;
    }
    for (std::size_t j = 0; j < cols.size(); ++j) {
      const py::handle item = cols[j];
      Column c;
      std::size_t rows = 0;
      if (py::isinstance<py::array>(item)) {
        const auto a = py::reinterpret_borrow<py::array>(item);
        if (!py::array_t<float>::check_(a) || a.ndim() != 1 || a.strides(0) % 4 != 0)
          throw std::invalid_argument("numeric column " + std::to_string(j + 1) +
                                      " must be a 1-D float32 array");
        c.numeric = true;
        c.values = static_cast<const float*>(a.data());
        c.stride = a.strides(0) / 4;
        rows = static_cast<std::size_t>(a.shape(0));
        arrays.push_back(a);
      } else if (py::isinstance<py::list>(item)) {
        const auto list = py::reinterpret_borrow<py::list>(item);
        c.cells.reserve(list.size());
        for (const py::handle cell : list) {
          if (cell.is_none()) {
            c.cells.emplace_back();  // the empty cell: how a CSV writes a missing value
          } else if (py::isinstance<py::str>(cell)) {
            c.cells.push_back(cell.cast<std::string>());
          } else {
            throw std::invalid_argument("text column " + std::to_string(j + 1) +
                                        " must hold str or None cells");
          }
        }
        rows = c.cells.size();
      } else {
        throw std::invalid_argument("column " + std::to_string(j + 1) +
                                    " must be a float32 array or a list of str/None");
      }
      if (j == 0) n_rows = rows;
      if (rows != n_rows)
        throw std::invalid_argument("column " + std::to_string(j + 1) + " has " +
                                    std::to_string(rows) + " rows, column 1 has " +
                                    std::to_string(n_rows));
      columns.push_back(std::move(c));
    }
  }

  /// What the table holds, in bytes: 8 per numeric cell (a float64 in the DataFrame), the
  /// text and a delimiter per text cell; the measure of "input" the one-hot bound uses.
  std::uint64_t bytes() const {
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

  bool has_text() const {
    for (const Column& c : columns)
      if (!c.numeric) return true;
    return false;
  }

  /// Row r's cells as the table encoder takes them (one per column); whether a numeric
  /// cell of the row is missing.
  bool cells(std::size_t r, std::vector<std::string_view>& out) const {
    out.resize(columns.size());
    bool missing_number = false;
    for (std::size_t j = 0; j < columns.size(); ++j) {
      const Column& c = columns[j];
      if (!c.numeric) {
        out[j] = c.cells[r];
        continue;
      }
      const float v = c.value(r);
      if (std::isinf(v))
        throw Error(kSource + ":" + std::to_string(r + 1) + ":" + std::to_string(j + 1) +
                    ": infinite value (a feature must be finite; NaN marks a missing one)");
      const bool missing = std::isnan(v);
      missing_number |= missing;
      out[j] = missing ? kMissingNumber : kSomeNumber;
    }
    return missing_number;
  }
};

/// Layout of a Python table: every column is a feature (the labels come separately, as
/// y). With a model's schema, its columns are matched by name when both have names, by
/// position otherwise (the CLI's rule; scikit-learn's own check has already required the
/// fit-time names in the fit-time order).
io::TableLayout python_layout(const PyTable& t, const TableSchema* model_schema) {
  io::LoadOptions options;
  options.label_column.kind = io::LabelColumn::Kind::None;
  options.schema = model_schema;
  return io::resolve_table_layout(t.names, t.columns.size(), options, kSource, 0);
}

/// One-hot blocks are the one place where a table's features can outgrow the table itself
/// (many text columns with many categories): bounded as parse_csv bounds them, by
/// io::sparse_value_limit of the table's size (PyTable::bytes, at least what its CSV holds
/// for the same numbers of cells).
void check_encoded_size(const PyTable& t, const TableSchema& schema) {
  const std::uint64_t values = static_cast<std::uint64_t>(t.n_rows) * schema.n_features();
  const std::uint64_t limit = io::sparse_value_limit(t.bytes());
  if (values > limit)
    throw Error(kSource + ": " + std::to_string(t.n_rows) + " rows x " +
                std::to_string(schema.n_features()) +
                " features after one-hot encoding the text columns is too large to encode "
                "(limit " + std::to_string(limit) + " values for this table); leave text "
                "columns out");
}

/// Encodes every row of `t` into `data` (n_rows × schema.n_features()). Rows the encoder
/// has nothing to decide for (all numeric, none missing, no categorical column) are
/// copied as they are; the others go through `encoder`, and their present numeric values
/// are then written over its placeholder numbers.
void encode_rows(const PyTable& t, const io::TableLayout& layout, const TableSchema& schema,
                 const io::TableRowEncoder& encoder, Dataset& data) {
  const std::size_t d = encoder.n_features();
  const std::vector<std::size_t> offsets = schema.offsets();
  const bool every_row_encoded = t.has_text() || schema.has_categorical();
  data.source = kSource;
  data.n_rows = t.n_rows;
  data.n_features = d;
  data.features.assign(t.n_rows * d, 0.0f);
  std::vector<std::string_view> cells;
  for (std::size_t r = 0; r < t.n_rows; ++r) {
    float* out = data.row(r);
    const bool missing_number = t.cells(r, cells);
    if (every_row_encoded || missing_number) encoder.encode(cells, r + 1, out);
    for (std::size_t k = 0; k < layout.features.size(); ++k) {
      const PyTable::Column& c = t.columns[layout.features[k]];
      if (!c.numeric || schema.columns[k].categorical()) continue;
      const float v = c.value(r);
      if (!std::isnan(v)) out[offsets[k]] = v;
    }
  }
}

py::array_t<float> features_array(Dataset&& data) {
  const auto shape = std::vector<py::ssize_t>{static_cast<py::ssize_t>(data.n_rows),
                                              static_cast<py::ssize_t>(data.n_features)};
  return to_numpy(std::move(data.features), shape);
}

/// Training: the schema `flynn train` learns from the same table written as CSV (names,
/// categorical columns and their sorted categories, the training means as fill values
/// under MissingPolicy::Mean), and the rows encoded with it, missing cells filled.
py::tuple encode_training_table(const py::list& columns,
                                const std::optional<std::vector<std::string>>& names,
                                const std::string& label_name, const std::string& missing) {
  const MissingPolicy policy = parse_missing_policy(missing);
  const PyTable t(columns, names);
  if (t.n_rows == 0) throw std::invalid_argument("the table has no rows");
  Dataset data;
  {
    py::gil_scoped_release nogil;
    const io::TableLayout layout = python_layout(t, nullptr);
    TableSchema schema;
    if (t.has_text()) {
      io::TableSchemaBuilder builder(layout, t.names, kSource);
      std::vector<std::string_view> cells;
      for (std::size_t r = 0; r < t.n_rows; ++r) {
        t.cells(r, cells);
        builder.observe(cells, r + 1);
      }
      schema = builder.finish();
    } else {
      schema = io::numeric_schema(layout, t.names);
    }
    check_encoded_size(t, schema);
    // The CLI stores the label column's header name with a named schema.
    if (schema.named) schema.label_name = label_name;
    const io::TableRowEncoder encoder(layout, schema, policy, kSource,
                                      io::TableRowEncoder::Mode::Training);
    encode_rows(t, layout, schema, encoder, data);
    if (policy == MissingPolicy::Mean) {
      data.schema = std::move(schema);
      // As parse_csv: the table's own means fill its missing cells and become the
      // schema's fill values (or the schema goes, when there is nothing to remember).
      io::complete_table(data, ImputationSums::of(data));
    } else if (io::schema_worth_keeping(schema, 0)) {
      // As the CSV parser under --missing zero|error: a schema is kept for its names or
      // categories only.
      data.schema = std::move(schema);
    }
  }
  TableSchema schema = data.schema;
  return py::make_tuple(features_array(std::move(data)), std::move(schema));
}

/// Prediction (and partial_fit / forget on a fitted model): the rows encoded with the
/// model's schema, as `flynn predict` encodes a CSV: its categories (an unseen one gives
/// an all-zero block), its fill values for missing cells under MissingPolicy::Mean (an
/// error when it has none).
py::array_t<float> encode_table(const py::list& columns,
                                const std::optional<std::vector<std::string>>& names,
                                const TableSchema& model_schema, const std::string& missing) {
  const MissingPolicy policy = parse_missing_policy(missing);
  const PyTable t(columns, names);
  Dataset data;
  {
    py::gil_scoped_release nogil;
    const TableSchema* given = model_schema.empty() ? nullptr : &model_schema;
    const io::TableLayout layout = python_layout(t, given);
    // A model without a schema reads its features by position, all numeric.
    const TableSchema schema = given ? model_schema : io::numeric_schema(layout, t.names);
    check_encoded_size(t, schema);
    const io::TableRowEncoder encoder(layout, schema, policy, kSource,
                                      io::TableRowEncoder::Mode::Prediction);
    encode_rows(t, layout, schema, encoder, data);
  }
  return features_array(std::move(data));
}

}  // namespace

void bind_tables(py::module_& m) {
  py::class_<TableSchema>(m, "TableSchema",
                          "The table behind a model's features (flynn/table_schema.hpp)")
      .def_property_readonly("empty", &TableSchema::empty)
      .def_property_readonly("named", [](const TableSchema& s) { return s.named; })
      .def_property_readonly("column_names",
                             [](const TableSchema& s) {
                               std::vector<std::string> names;
                               for (const TableColumn& c : s.columns) names.push_back(c.name);
                               return names;
                             })
      .def_property_readonly("categories",
                             [](const TableSchema& s) {
                               std::vector<std::vector<std::string>> cats;
                               for (const TableColumn& c : s.columns) cats.push_back(c.categories);
                               return cats;
                             },
                             "Per column: its categories (sorted), [] for a numeric column.")
      .def_property_readonly("has_categorical", &TableSchema::has_categorical)
      .def_property_readonly("label_name", [](const TableSchema& s) { return s.label_name; })
      .def_property_readonly("id_name", [](const TableSchema& s) { return s.id_name; })
      .def_property_readonly("fill", [](const TableSchema& s) { return s.fill; },
                             "Per feature: the training mean filling missing cells ([] when none).")
      .def_property_readonly("n_features", &TableSchema::n_features)
      .def("feature_name", &TableSchema::feature_name, py::arg("j"),
           "Feature j's display name: 'age', 'color=red', or 'column 3' when unnamed.")
      .def("__eq__", [](const TableSchema& a, const TableSchema& b) { return a == b; });

  m.def("encode_training_table", &encode_training_table, py::arg("columns"), py::arg("names"),
        py::arg("label_name"), py::arg("missing"),
        "(features float32 n x d, TableSchema) of a training table, as flynn train encodes "
        "the same table as CSV.");
  m.def("encode_table", &encode_table, py::arg("columns"), py::arg("names"), py::arg("schema"),
        py::arg("missing"),
        "The features (float32 n x d) of a table under a model's schema, as flynn predict "
        "encodes the same table as CSV.");
}

}  // namespace flynn::python
