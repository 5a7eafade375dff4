#pragma once
// flynn._flynn.federated: the simulated federation and the DP release of one party's
// counts (flynn/federated/*), for the Python module flynn.federated.
#include <pybind11/pybind11.h>

namespace flynn::python {

/// Adds simulate, privatize and sum_releases to `m`.
void bind_federated(pybind11::module_& m);

}  // namespace flynn::python
