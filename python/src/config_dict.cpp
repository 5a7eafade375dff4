#include "config_dict.hpp"

#include <string>

namespace py = pybind11;

namespace flynn::python {

py::dict config_params(const FlyConfig& c) {
  py::dict d;
  d["m"] = c.m;
  d["s"] = c.s;
  d["rho"] = c.rho;
  d["gamma"] = c.gamma;
  d["seed"] = c.seed;
  d["preprocess"] = std::string(preprocess_name(c.preprocess));
  d["variant"] = variant_name(c.variant);
  return d;
}

py::dict config_dict(const FlyConfig& c) {
  py::dict d;
  d["n_features"] = c.input_dim;
  for (auto item : config_params(c)) d[item.first] = item.second;
  return d;
}

}  // namespace flynn::python
