#pragma once
// Tables from Python (pandas DataFrames, arrays with missing values) encoded into model
// features by the same code that encodes a CSV for `flynn train` / `flynn predict`
// (flynn::io::encode_training_table / encode_table, flynn/io/memory_table.hpp): the categorical
// columns, their one-hot blocks, the missing-value policy and the training means are the
// CLI's, so a DataFrame and the CSV pandas writes for it give the same model bytes.
//
// A table arrives as a list of columns by position, each either numeric (a 1-D float32
// array, NaN = missing) or text (a list of str, None = missing). Text cells are the CSV
// cells pandas would write (the Python side renders them); numeric cells are already
// numbers and are placed as they are (the encoder only sees them as "missing" or
// "a number", so it decides what a missing or a numeric cell in a categorical column becomes).
#include <pybind11/pybind11.h>

namespace flynn::python {

/// Registers flynn._flynn.TableSchema, encode_training_table and encode_table.
void bind_tables(pybind11::module_& m);

}  // namespace flynn::python
