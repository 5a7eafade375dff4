#include "report_bindings.hpp"

#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "flynn/eval/classification_report.hpp"
#include "flynn/eval/report_files.hpp"
#include "model_handle.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

using Proba = py::array_t<double, py::array::c_style | py::array::forcecast>;

/// The report of rows with classes `truth` (ids into `classes`), the classes predict
/// returned for them and the probabilities predict_proba returned (n × L); `excluded`
/// rows had a class outside `classes`. `facts` is a JSON object of strings and numbers.
eval::ClassificationReport classification_report(const LabelIds& truth, const LabelIds& predicted,
                                                 const Proba& proba,
                                                 std::vector<std::string> classes,
                                                 std::uint64_t excluded, const std::string& title,
                                                 const std::string& description,
                                                 const std::string& facts) {
  const std::size_t n = static_cast<std::size_t>(truth.size()), L = classes.size();
  if (truth.ndim() != 1 || predicted.ndim() != 1 || static_cast<std::size_t>(predicted.size()) != n)
    throw std::invalid_argument("expected one true and one predicted class id per row");
  if (proba.ndim() != 2 || static_cast<std::size_t>(proba.shape(0)) != n ||
      static_cast<std::size_t>(proba.shape(1)) != L)
    throw std::invalid_argument("expected probabilities of shape (rows, classes)");
  eval::ClassificationReportBuilder builder(std::move(classes));
  builder.add(std::vector<std::uint32_t>(truth.data(), truth.data() + n),
              std::vector<std::uint32_t>(predicted.data(), predicted.data() + n),
              std::vector<double>(proba.data(), proba.data() + n * L));
  builder.exclude(excluded);
  eval::ClassificationReport r = std::move(builder).finish(title, description);
  r.facts = nlohmann::json::parse(facts);
  return r;
}

}  // namespace

void bind_report(py::module_& m) {
  py::class_<eval::ClassificationReport>(
      m, "ClassificationReport", "A classification report (flynn/eval/classification_report.hpp)")
      .def(
          "to_json", [](const eval::ClassificationReport& r) { return eval::to_json(r).dump(); },
          "The report as the JSON text of report.json")
      .def(
          "html",
          [](const eval::ClassificationReport& r) {
            return eval::report_html(r, eval::draw_report_figures(r));
          },
          "The report as report.html's page")
      .def("write", &eval::write_report, py::arg("folder"),
           "Writes report.json, report.html and the figures into `folder` at once; returns the "
           "file names")
      .def(
          "figures",
          [](const eval::ClassificationReport& r) {
            py::dict out;
            for (const eval::ReportFigure& f : eval::draw_report_figures(r))
              out[py::str(f.file)] = py::bytes(f.png);
            return out;
          },
          "The PNG figures, by file name");
  m.def("classification_report", &classification_report, py::arg("truth"), py::arg("predicted"),
        py::arg("proba"), py::arg("classes"), py::arg("excluded"), py::arg("title"),
        py::arg("description"), py::arg("facts"));
}

}  // namespace flynn::python
