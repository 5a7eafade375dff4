// flynn._flynn: the compiled half of the Python package. The public API lives in the
// pure-Python package (flynn/__init__.py, FlyNNClassifier, flynn.federated); this module
// only exposes the core objects it is built on.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "config_dict.hpp"
#include "dask_bindings.hpp"
#include "federated_bindings.hpp"
#include "file_training_bindings.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/simd.hpp"
#include "flynn/version.hpp"
#include "model_handle.hpp"
#include "sparse_rows.hpp"
#include "table_bindings.hpp"
#ifdef FLYNN_PYTHON_WITH_TUNE
#include "report_bindings.hpp"
#include "tune_bindings.hpp"
#endif

namespace py = pybind11;
using namespace flynn;
using flynn::python::config_dict;
using flynn::python::ModelHandle;

namespace {

py::dict provenance_dict(const Provenance& p) {
  py::dict d;
  d["differentially_private"] = p.differentially_private;
  d["epsilon"] = p.epsilon;
  d["dp_T"] = p.dp_T;
  d["dp_parties"] = p.dp_parties;
  return d;
}

// flynn.build_info(): the version, and which SIMD target and kernels run here
// (flynn/simd.hpp; `flynn info` without a model says the same).
py::dict build_info() {
  const simd::KernelReport r = simd::kernel_report();
  py::dict d;
  d["version"] = flynn::version_string;
  d["model_format_version"] = io::kModelFormatVersion;
  d["simd_target"] = r.target;
  d["simd_pinned"] = r.pinned;
  d["cpu_targets"] = r.cpu_targets;
  d["block_kernels"] = true;
  d["block_rows"] = r.block_rows;
  d["one_row_kernel"] = r.one_row;
  d["one_row_kernel_name"] = r.one_row_kernel;
  return d;
}

}  // namespace

PYBIND11_MODULE(_flynn, m) {
  m.doc() = "flynn's C++ core (FlyHash + Fly Bloom Filters); use the flynn package instead";
  m.attr("__version__") = flynn::version_string;
  m.attr("model_format_version") = io::kModelFormatVersion;
  m.def("build_info", &build_info,
        "This build and machine: version, model format, the SIMD target the kernels run on "
        "(FLYNN_SIMD_TARGET pins it), the targets this CPU runs, and whether the block and "
        "one-row kernels are in use (a dict).");

  // flynn::Error is a user error with a complete one-line message: a ValueError in Python.
  // The federation's error (the same on every party) is a subclass of it.
  static py::exception<Error> flynn_error(m, "FlynnError", PyExc_ValueError);
  static py::exception<federated::FederationError> federation_error(m, "FederationError",
                                                                    flynn_error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const federated::FederationError& e) {
      federation_error(e.what());
    } catch (const Error& e) {
      flynn_error(e.what());
    }
  });

  py::class_<HyperParams>(m, "HyperParams")
      .def(py::init([](const py::kwargs& given) { return python::hyper_params(given); }),
           "Hyper-parameters by keyword, named as the library's table of settings "
           "(hyper_param_names()); None or absent: flynn's default.")
      .def("resolve",
           [](const HyperParams& h, std::uint32_t d, std::size_t n_classes) {
             return config_dict(h.resolve(d, n_classes));
           },
           py::arg("n_features"), py::arg("n_classes") = 0,
           "The concrete configuration for n_features inputs (flynn's defaults filled in).");

  // predict_proba's temperature for a model without a fitted calibration
  // (docs/guide/probabilities.md).
  m.attr("default_temperature") = Defaults::temperature;

  m.def(
      "calibration_grid",
      [] {
        std::vector<std::pair<double, double>> out;
        for (const Calibration& c : calibration_grid()) out.emplace_back(c.temperature, c.prior_weight);
        return out;
      },
      "The calibration fit's candidates (temperature, prior weight), in the order of its loss sums.");

  m.def("hyper_param_names", &python::hyper_param_names,
        "The hyper-parameters' names, in the order of the library's table of settings.");

  py::class_<Provenance>(m, "Provenance")
      .def(py::init([](bool dp, double epsilon, std::uint32_t T, std::uint32_t parties) {
             Provenance p;
             p.differentially_private = dp;
             p.epsilon = epsilon;
             p.dp_T = T;
             p.dp_parties = parties;
             return p;
           }),
           py::arg("differentially_private") = false, py::arg("epsilon") = 0.0,
           py::arg("dp_T") = 0, py::arg("dp_parties") = 0);

  python::bind_tables(m);

  py::class_<ModelHandle>(m, "Model")
      .def(py::init([](const HyperParams& h, std::uint32_t d, std::vector<std::string> labels,
                       int threads) { return ModelHandle(h, d, std::move(labels), threads); }),
           py::arg("hyper"), py::arg("n_features"), py::arg("labels"), py::arg("threads") = 0)
      .def_static("from_bytes", &ModelHandle::from_bytes, py::arg("data"),
                  py::arg("source") = "<bytes>", py::arg("threads") = 0,
                  py::arg("max_model_memory") = 0)
      .def_static("load", &ModelHandle::load, py::arg("path"), py::arg("threads") = 0,
                  py::arg("max_model_memory") = 0)
      .def("to_bytes", &ModelHandle::to_bytes)
      .def("save", &ModelHandle::save, py::arg("path"))
      .def("fit", &ModelHandle::fit, py::arg("X"), py::arg("y"))
      .def("partial_fit", &ModelHandle::partial_fit, py::arg("X"), py::arg("y"))
      .def("forget", &ModelHandle::forget, py::arg("X"), py::arg("y"))
      .def("merge", &ModelHandle::merge, py::arg("other"))
      .def("predict", &ModelHandle::predict, py::arg("X"))
      .def("scores", &ModelHandle::scores, py::arg("X"))
      .def("hash", &ModelHandle::hash, py::arg("X"))
      .def("predict_proba", &ModelHandle::predict_proba, py::arg("X"))
      .def("logits", &ModelHandle::logits, py::arg("X"))
      .def("counts", &ModelHandle::counts)
      .def("calibration_loss", &ModelHandle::calibration_loss, py::arg("X"), py::arg("y"), py::arg("total_rows"))
      .def("leave_one_out_scores", &ModelHandle::leave_one_out_scores, py::arg("X"), py::arg("y"))
      .def("calibrate_from_losses", &ModelHandle::calibrate_from_losses, py::arg("sums"), py::arg("rows"))
      .def_property(
          "calibration",
          [](const ModelHandle& h) {
            const Calibration& c = h.model().calibration();
            py::dict d;
            d["temperature"] = c.temperature;
            d["prior_weight"] = c.prior_weight;
            d["source"] = calibration_source_name(c.source);
            d["rows"] = c.rows;
            return d;
          },
          [](ModelHandle& h, const py::dict& d) {
            Calibration c = h.model().calibration();
            c.temperature = d["temperature"].cast<double>();
            c.prior_weight = d.contains("prior_weight") ? d["prior_weight"].cast<double>() : c.prior_weight;
            c.source = CalibrationSource::Given;
            c.rows = 0;
            h.model().set_calibration(c);
          },
          "How scores become probabilities: temperature, prior_weight, source and rows (setting it takes "
          "temperature and prior_weight, source 'given').")
      .def_property(
          "missing_policy",
          [](const ModelHandle& h) -> py::object {
            if (!h.model().missing_policy()) return py::none();
            return py::str(missing_policy_name(*h.model().missing_policy()));
          },
          [](ModelHandle& h, const py::object& v) {
            h.model().set_missing_policy(v.is_none() ? std::nullopt
                                                     : std::optional(parse_missing_policy(v.cast<std::string>())));
          },
          "The missing-value policy the model was trained with (None when not recorded).")
      .def("set_counts", &ModelHandle::set_counts, py::arg("counts"), py::arg("rows_per_class"),
           py::arg("provenance"))
      .def_property("threads", [](const ModelHandle& h) { return h.model().threads(); },
                    [](ModelHandle& h, int t) { h.model().set_threads(t); })
      .def_property_readonly("config", [](const ModelHandle& h) { return config_dict(h.model().config()); })
      .def_property_readonly("count_cells", [](const ModelHandle& h) { return h.model().config().cells(); },
                             "Count cells per class: m, and the pair cells with pairs")
      .def_property_readonly("codes_per_row", [](const ModelHandle& h) { return h.model().config().codes_per_row(); },
                             "Ones each training row adds to its class's counts")
      .def_property_readonly("labels", [](const ModelHandle& h) { return h.model().labels().names(); })
      .def_property("table_schema", [](const ModelHandle& h) { return h.model().table_schema(); },
                    [](ModelHandle& h, TableSchema s) { h.model().set_table_schema(std::move(s)); })
      .def_property_readonly("provenance",
                             [](const ModelHandle& h) { return provenance_dict(h.model().provenance()); });

  python::bind_sparse_rows(m);
  python::bind_file_training(m);

  py::module_ fed = m.def_submodule("federated", "FlyNNFL: simulated federation and DP releases");
  python::bind_federated(fed);
  py::module_ dask = m.def_submodule("dask", "exact per-partition sums for flynn.dask");
  python::bind_dask(dask);
#ifdef FLYNN_PYTHON_WITH_TUNE
  python::bind_tune(m);
  python::bind_report(m);
#endif
}
