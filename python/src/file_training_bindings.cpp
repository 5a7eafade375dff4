#include "file_training_bindings.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <pybind11/stl.h>

#include "flynn/config.hpp"
#include "flynn/error.hpp"
#include "flynn/io/feature_stats_file.hpp"
#include "flynn/io/train_file.hpp"
#include "config_dict.hpp"
#include "model_handle.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

// The flags arrive as the CLI's texts (flynn/_fit_file.py spells Python values so), and the
// hyper-parameters as a dict named as the table of settings' rows (config_dict.hpp), None
// or absent where the flag is not given.
py::tuple train_file(const std::string& path, const io::LoadFlags& flags, const py::dict& hyper,
                     const std::string& labels, const std::string& feature_stats,
                     std::size_t chunk_rows, int threads) {
  io::FileTrainingOptions o;
  // In the CLI's order (flynn train): the flags, then the statistics file, then the data.
  o.load = io::load_options(flags);
  if (!feature_stats.empty()) {
    o.public_stats = io::load_feature_stats(feature_stats, flags.max_input_bytes);
    o.public_stats_source = fmt::format("feature_stats {}", feature_stats);
  }
  o.hyper = hyper_params(hyper);
  if (!labels.empty()) o.labels = LabelSet::parse_list(labels);
  if (chunk_rows == 0) throw Error("chunk_rows must be at least 1");
  o.chunk_rows = chunk_rows;
  o.threads = threads;
  // Ctrl-C (or any signal whose handler raises) stops the training between chunks: the
  // progress callback runs the pending signal handlers, and the exception one raised is
  // raised here once the core has stopped.
  std::optional<py::error_already_set> interrupted;
  o.progress = [&interrupted](std::string_view phase) -> ProgressFn {
    if (phase.empty()) return {};
    return [&interrupted](std::size_t, std::size_t) {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() == 0) return true;
      interrupted.emplace();  // takes the exception the handler raised
      return false;
    };
  };
  std::optional<io::FileTrainingResult> t;
  try {
    py::gil_scoped_release nogil;
    t.emplace(io::train_from_file(path, o));
  } catch (const Cancelled&) {
    if (interrupted) throw *interrupted;
    throw;
  }
  return py::make_tuple(ModelHandle(std::move(t->model)), t->rows, t->n_features, t->load_seconds,
                        t->train_seconds);
}

// Learns (or removes) a file's labelled rows into the model, as `flynn update` (`flynn
// forget`) does: the rows of the whole file, streamed in chunks (io::learn_file,
// io::forget_file); the model's rules (a DP release refuses both) are the core's.
template <std::uint64_t (*edit)(FlyNN&, const std::string&, const io::FileEditOptions&)>
std::uint64_t edit_from_file(ModelHandle& handle, const std::string& path,
                             const io::LoadFlags& flags, std::size_t chunk_rows) {
  io::FileEditOptions o;
  o.load = io::load_options(flags);
  if (chunk_rows == 0) throw Error("chunk_rows must be at least 1");
  o.chunk_rows = chunk_rows;
  o.add_classes_hint = "train with every class (fit_file labels=...) first";
  py::gil_scoped_release nogil;
  return edit(handle.model(), path, o);
}

}  // namespace

void bind_file_training(py::module_& m) {
  py::class_<io::LoadFlags>(m, "LoadFlags")
      .def(py::init<>())
      .def_readwrite("format", &io::LoadFlags::format)
      .def_readwrite("label_col", &io::LoadFlags::label_col)
      .def_readwrite("header", &io::LoadFlags::header)
      .def_readwrite("delimiter", &io::LoadFlags::delimiter)
      .def_readwrite("idx_labels", &io::LoadFlags::idx_labels)
      .def_readwrite("max_input_bytes", &io::LoadFlags::max_input_bytes)
      .def_readwrite("id_col", &io::LoadFlags::id_col)
      .def_readwrite("feature_cols", &io::LoadFlags::feature_cols)
      .def_readwrite("ignore_cols", &io::LoadFlags::ignore_cols)
      .def_readwrite("missing", &io::LoadFlags::missing);
  m.def("train_file", &train_file, py::arg("path"), py::arg("flags"), py::arg("hyper") = py::dict(),
        py::arg("labels") = "", py::arg("feature_stats") = "", py::arg("chunk_rows") = io::ChunkLimits{}.max_rows,
        py::arg("threads") = 0,
        "Trains a Model from a data file as `flynn train` does: (model, rows, n_features, "
        "load_seconds, train_seconds).");
  m.def("learn_file", &edit_from_file<&io::learn_file>, py::arg("model"), py::arg("path"),
        py::arg("flags"), py::arg("chunk_rows") = io::ChunkLimits{}.max_rows,
        "Learns a file's labelled rows into the Model as `flynn update` does; returns the rows.");
  m.def("forget_file", &edit_from_file<&io::forget_file>, py::arg("model"), py::arg("path"),
        py::arg("flags"), py::arg("chunk_rows") = io::ChunkLimits{}.max_rows,
        "Removes a file's labelled rows from the Model as `flynn forget` does; returns the rows.");
}

}  // namespace flynn::python
