#pragma once
// _flynn.train_file: the C++ half of flynn.fit_file (python/flynn/_fit_file.py), training
// from a data file through the library's streaming trainer (flynn/io/train_file.hpp),
// exactly as `flynn train` does.
#include <pybind11/pybind11.h>

namespace flynn::python {

/// Registers _flynn.train_file in `m`; call after the Model class is registered.
void bind_file_training(pybind11::module_& m);

}  // namespace flynn::python
