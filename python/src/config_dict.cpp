#include "config_dict.hpp"

#include <string>
#include <variant>

#include <fmt/format.h>

namespace py = pybind11;

namespace flynn::python {

namespace {

// The fields of the table of settings (settings_table.hpp) that `estimator_only` selects,
// as Python values under their Python keys.
py::dict fields_dict(const FlyConfig& c, bool estimator_only) {
  py::dict d;
  for (const ConfigField& f : config_fields()) {
    if (estimator_only && !f.estimator_param) continue;
    d[f.python] = setting_object(f.get(c));
  }
  return d;
}

}  // namespace

HyperParams hyper_params(const py::dict& given) {
  HyperParams h;
  for (auto [key, value] : given) {
    const std::string name = py::str(key);
    const HyperParamField* f = find_hyper_param(name);
    if (!f) {
      std::string names;
      for (const HyperParamField& row : hyper_param_fields()) names += (names.empty() ? "" : ", ") + std::string(row.name);
      throw py::type_error(fmt::format("unexpected hyper-parameter '{}'; the hyper-parameters are {}", name, names));
    }
    if (value.is_none()) continue;
    f->set(h, python_setting(f->name, f->kind, value));
  }
  return h;
}

py::tuple hyper_param_names() {
  py::list names;
  for (const HyperParamField& f : hyper_param_fields()) names.append(f.name);
  return py::tuple(names);
}

SettingValue python_setting(const char* name, SettingKind kind, const py::handle& v) {
  const char* want = kind == SettingKind::Unsigned ? "a non-negative integer"
                     : kind == SettingKind::Real   ? "a number"
                                                   : "a str";
  // bool is an int in Python, but never a count, a ratio or a name.
  if (!py::isinstance<py::bool_>(v)) {
    try {
      switch (kind) {
        case SettingKind::Unsigned: return v.cast<std::uint64_t>();
        case SettingKind::Real: return v.cast<double>();
        case SettingKind::Choice:
          if (py::isinstance<py::str>(v)) return v.cast<std::string>();
          break;
      }
    } catch (const py::cast_error&) {
    }
  }
  throw py::type_error(fmt::format("{}={}: expected {}", name, py::repr(v).cast<std::string>(), want));
}

py::object setting_object(const SettingValue& value) {
  return std::visit([](const auto& v) { return py::cast(v); }, value);
}

py::dict config_params(const FlyConfig& c) { return fields_dict(c, true); }

py::dict config_dict(const FlyConfig& c) { return fields_dict(c, false); }

}  // namespace flynn::python
