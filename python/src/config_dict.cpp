#include "config_dict.hpp"

#include <string>
#include <variant>

#include "flynn/settings_table.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

// The fields of the table of settings (settings_table.hpp) that `estimator_only` selects,
// as Python values under their Python keys.
py::dict fields_dict(const FlyConfig& c, bool estimator_only) {
  py::dict d;
  for (const ConfigField& f : config_fields()) {
    if (estimator_only && !f.estimator_param) continue;
    d[f.python] = std::visit([](const auto& v) { return py::cast(v); }, f.get(c));
  }
  return d;
}

}  // namespace

py::dict config_params(const FlyConfig& c) { return fields_dict(c, true); }

py::dict config_dict(const FlyConfig& c) { return fields_dict(c, false); }

}  // namespace flynn::python
