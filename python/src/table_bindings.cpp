#include "table_bindings.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "flynn/dataset.hpp"
#include "flynn/io/memory_table.hpp"
#include "flynn/table_schema.hpp"
#include "numpy_rows.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

/// A table from Python, by position: every column a float32 array or a list of str/None,
/// all of n_rows rows, as io::MemoryTable (flynn/io/memory_table.hpp) encodes it. Built
/// with the GIL held; read without it (the arrays are kept alive here).
struct PyTable {
  io::MemoryTable table;
  std::vector<py::array> arrays;  // the numeric columns' arrays, kept alive

  PyTable(const py::list& cols, const std::optional<std::vector<std::string>>& column_names) {
    if (cols.empty()) throw std::invalid_argument("the table has no columns");
    if (column_names) {
      if (column_names->size() != cols.size())
        throw std::invalid_argument(std::to_string(column_names->size()) + " column names for " +
                                    std::to_string(cols.size()) + " columns");
      table.names = *column_names;
    }
    for (std::size_t j = 0; j < cols.size(); ++j) {
      const py::handle item = cols[j];
      io::MemoryTable::Column c;
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
      if (j == 0) table.n_rows = rows;
      if (rows != table.n_rows)
        throw std::invalid_argument("column " + std::to_string(j + 1) + " has " +
                                    std::to_string(rows) + " rows, column 1 has " +
                                    std::to_string(table.n_rows));
      table.columns.push_back(std::move(c));
    }
  }
};

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
  if (t.table.n_rows == 0) throw std::invalid_argument("the table has no rows");
  Dataset data;
  {
    py::gil_scoped_release nogil;
    data = io::encode_training_table(t.table, label_name, policy);
  }
  TableSchema schema = data.schema;
  return py::make_tuple(features_array(std::move(data)), std::move(schema));
}

/// Prediction (and partial_fit / forget on a fitted model): the rows encoded with the
/// model's schema, as `flynn predict` encodes a CSV.
py::array_t<float> encode_table(const py::list& columns,
                                const std::optional<std::vector<std::string>>& names,
                                const TableSchema& model_schema, const std::string& missing) {
  const MissingPolicy policy = parse_missing_policy(missing);
  const PyTable t(columns, names);
  Dataset data;
  {
    py::gil_scoped_release nogil;
    data = io::encode_table(t.table, model_schema, policy);
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
