#include "model_handle.hpp"

#include <stdexcept>
#include <utility>

#include "flynn/error.hpp"
#include "flynn/io/model_file.hpp"
#include "numpy_rows.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

/// Checks that there is one class id per row and that every id names a class.
const std::uint32_t* checked_labels(const LabelIds& y, const NumpyRows& rows,
                                    std::size_t n_classes) {
  if (y.ndim() != 1 || static_cast<std::size_t>(y.shape(0)) != rows.n_rows())
    throw std::invalid_argument("expected one class id per row (" +
                                std::to_string(rows.n_rows()) + " rows)");
  const std::uint32_t* ids = y.data();
  for (std::size_t r = 0; r < rows.n_rows(); ++r)
    if (ids[r] >= n_classes)
      throw std::invalid_argument("row " + std::to_string(r) + ": class id " +
                                  std::to_string(ids[r]) + " is not below the " +
                                  std::to_string(n_classes) + " classes");
  return ids;
}

void check_width(const NumpyRows& rows, const FlyNN& model) {
  if (rows.n_cols() != model.config().input_dim)
    throw Error(std::to_string(rows.n_cols()) + " features per row, but the model expects " +
                std::to_string(model.config().input_dim));
}

/// Calls fn(block, first_row) on consecutive blocks of at most rows.block_rows() rows, so
/// that converting an array never holds more than one block of float32 rows.
template <typename Fn>
void for_each_block(const NumpyRows& rows, const std::uint32_t* labels, const LabelSet& classes,
                    Fn&& fn) {
  const std::size_t step = rows.block_rows();
  for (std::size_t first = 0; first < rows.n_rows(); first += step) {
    const std::size_t count = std::min(step, rows.n_rows() - first);
    fn(rows_dataset(rows, first, count, labels, classes), first);
  }
}

/// The counts the rows add to `model` (model unchanged).
ClassCounts count_rows(const FlyNN& model, const NumpyRows& rows, const std::uint32_t* labels) {
  ClassCounts total(model.labels().size(), model.config().m);
  for_each_block(rows, labels, model.labels(),
                 [&](const Dataset& block, std::size_t) { total += model.count(block); });
  return total;
}

py::array_t<std::uint32_t> counts_array(const ClassCounts& c) {
  py::array_t<std::uint32_t> out({static_cast<py::ssize_t>(c.n_classes()),
                                  static_cast<py::ssize_t>(c.m())});
  std::copy(c.values().begin(), c.values().end(), out.mutable_data());
  return out;
}

py::array_t<std::uint64_t> rows_array(const ClassCounts& c) {
  py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(c.n_classes()));
  std::copy(c.rows_per_class().begin(), c.rows_per_class().end(), out.mutable_data());
  return out;
}

}  // namespace

HyperParams make_hyper(std::optional<std::uint64_t> m, std::optional<std::uint64_t> s,
                       std::optional<std::uint64_t> rho, std::optional<double> gamma,
                       std::optional<std::uint64_t> seed, std::optional<std::string> preprocess) {
  HyperParams h;
  h.m = m;
  h.s = s;
  h.rho = rho;
  h.gamma = gamma;
  h.seed = seed;
  if (preprocess) h.preprocess = parse_preprocess(*preprocess);
  return h;
}

ModelHandle::ModelHandle(const HyperParams& hyper, std::uint32_t n_features,
                         std::vector<std::string> labels, int threads)
    : model_(hyper.resolve(n_features, labels.size()), LabelSet(std::move(labels)), threads) {}

ModelHandle ModelHandle::from_bytes(const std::string& bytes, const std::string& source,
                                    int threads) {
  io::ModelContents mc = io::parse_model(bytes, source);
  FlyNN model(mc.config, std::move(mc.labels), std::move(mc.counts), threads);
  model.set_provenance(mc.provenance);
  return ModelHandle(std::move(model));
}

ModelHandle ModelHandle::load(const std::string& path, int threads) {
  return ModelHandle(io::load_model(path, threads));
}

py::bytes ModelHandle::to_bytes() const {
  std::string bytes;
  {
    py::gil_scoped_release nogil;
    bytes = io::serialize_model(model_);
  }
  return py::bytes(bytes);
}

void ModelHandle::save(const std::string& path) const {
  py::gil_scoped_release nogil;
  io::save_model(model_, path);
}

void ModelHandle::fit(const py::array& X, const LabelIds& y) {
  const NumpyRows rows(X);
  check_width(rows, model_);
  const std::uint32_t* labels = checked_labels(y, rows, model_.labels().size());
  py::gil_scoped_release nogil;
  // fit = forget everything, then count: the counts of the rows are the whole model.
  model_.set_counts(count_rows(model_, rows, labels));
}

void ModelHandle::partial_fit(const py::array& X, const LabelIds& y) {
  const NumpyRows rows(X);
  check_width(rows, model_);
  const std::uint32_t* labels = checked_labels(y, rows, model_.labels().size());
  py::gil_scoped_release nogil;
  ClassCounts updated = model_.counts();
  updated += count_rows(model_, rows, labels);
  model_.set_counts(std::move(updated));
}

void ModelHandle::forget(const py::array& X, const LabelIds& y) {
  const NumpyRows rows(X);
  check_width(rows, model_);
  const std::uint32_t* labels = checked_labels(y, rows, model_.labels().size());
  py::gil_scoped_release nogil;
  // Forgetting no rows applies the library's own rule for which models may forget (not
  // differentially private ones) before any work is done.
  model_.forget(rows_dataset(rows, 0, 0, labels, model_.labels()));
  ClassCounts updated = model_.counts();
  updated -= count_rows(model_, rows, labels);  // throws, unchanged, on rows never learned
  model_.set_counts(std::move(updated));
}

py::array_t<std::uint32_t> ModelHandle::predict(const py::array& X) const {
  const NumpyRows rows(X);
  check_width(rows, model_);
  py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(rows.n_rows()));
  std::uint32_t* dst = out.mutable_data();
  py::gil_scoped_release nogil;
  for_each_block(rows, nullptr, model_.labels(), [&](const Dataset& block, std::size_t first) {
    const std::vector<std::uint32_t> ids = model_.predict(block);
    std::copy(ids.begin(), ids.end(), dst + first);
  });
  return out;
}

py::array_t<double> ModelHandle::scores(const py::array& X) const {
  const NumpyRows rows(X);
  check_width(rows, model_);
  const std::size_t L = model_.labels().size();
  py::array_t<double> out({static_cast<py::ssize_t>(rows.n_rows()), static_cast<py::ssize_t>(L)});
  double* dst = out.mutable_data();
  py::gil_scoped_release nogil;
  for_each_block(rows, nullptr, model_.labels(), [&](const Dataset& block, std::size_t first) {
    const std::vector<double> s = model_.scores(block);
    std::copy(s.begin(), s.end(), dst + first * L);
  });
  return out;
}

py::array_t<double> ModelHandle::predict_proba(const py::array& X) const {
  const NumpyRows rows(X);
  check_width(rows, model_);
  const std::size_t L = model_.labels().size();
  py::array_t<double> out({static_cast<py::ssize_t>(rows.n_rows()), static_cast<py::ssize_t>(L)});
  double* dst = out.mutable_data();
  py::gil_scoped_release nogil;
  for_each_block(rows, nullptr, model_.labels(), [&](const Dataset& block, std::size_t first) {
    const std::vector<double> p = model_.predict_proba(block);
    std::copy(p.begin(), p.end(), dst + first * L);
  });
  return out;
}

py::tuple ModelHandle::count(const py::array& X, const LabelIds& y) const {
  const NumpyRows rows(X);
  check_width(rows, model_);
  const std::uint32_t* labels = checked_labels(y, rows, model_.labels().size());
  ClassCounts c;
  {
    py::gil_scoped_release nogil;
    c = count_rows(model_, rows, labels);
  }
  return py::make_tuple(counts_array(c), rows_array(c));
}

py::tuple ModelHandle::counts() const {
  return py::make_tuple(counts_array(model_.counts()), rows_array(model_.counts()));
}

void ModelHandle::set_counts(
    const py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>& counts,
    const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& rows,
    const Provenance& provenance) {
  const std::size_t L = model_.labels().size();
  const std::uint32_t m = model_.config().m;
  if (counts.ndim() != 2 || static_cast<std::size_t>(counts.shape(0)) != L ||
      static_cast<std::size_t>(counts.shape(1)) != m)
    throw std::invalid_argument("counts must have shape (" + std::to_string(L) + ", " +
                                std::to_string(m) + ") (classes × m)");
  if (rows.ndim() != 1 || static_cast<std::size_t>(rows.shape(0)) != L)
    throw std::invalid_argument("rows per class must have shape (" + std::to_string(L) + ",)");
  ClassCounts c(L, m);
  std::copy(counts.data(), counts.data() + L * m, c.values().begin());
  std::copy(rows.data(), rows.data() + L, c.rows_per_class().begin());
  model_.set_counts(std::move(c));
  model_.set_provenance(provenance);
}

}  // namespace flynn::python
