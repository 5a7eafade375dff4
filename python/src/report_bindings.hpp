#pragma once
// flynn._flynn.ClassificationReport: the evaluation layer's classification report
// (flynn/eval/classification_report.hpp, report_files.hpp), for the Python function
// flynn.report. Present only when the module is built with the evaluation layer
// (FLYNN_PYTHON_WITH_TUNE).
#include <pybind11/pybind11.h>

namespace flynn::python {

/// Adds ClassificationReport and classification_report(...) to `m`.
void bind_report(pybind11::module_& m);

}  // namespace flynn::python
