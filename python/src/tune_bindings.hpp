#pragma once
// flynn._flynn.tune: the evaluation layer's hyper-parameter search (tune_flynn, the one
// `flynn tune` runs), for the Python function flynn.tune. Present only when the module is
// built with the evaluation layer (FLYNN_PYTHON_WITH_TUNE).
#include <pybind11/pybind11.h>

namespace flynn::python {

/// Adds tune(...) to `m`.
void bind_tune(pybind11::module_& m);

}  // namespace flynn::python
