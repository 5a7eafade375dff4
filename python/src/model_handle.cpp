#include "model_handle.hpp"

#include <stdexcept>
#include <utility>

#include "flynn/error.hpp"
#include "flynn/feature_stats.hpp"
#include "flynn/io/model_file.hpp"
#include "numpy_rows.hpp"
#include "sparse_rows.hpp"

namespace py = pybind11;

namespace flynn::python {

namespace {

/// The class ids, one per row (checked here because converted rows take the ids block by
/// block; the library checks each id against the model's classes).
template <typename Rows>
const std::uint32_t* checked_labels(const LabelIds& y, const Rows& rows) {
  if (y.ndim() != 1 || static_cast<std::size_t>(y.shape(0)) != rows.n_rows())
    throw std::invalid_argument("expected one class id per row (" +
                                std::to_string(rows.n_rows()) + " rows)");
  return y.data();
}

/// The counts the rows add to `model` (model unchanged), for rows that must be converted:
/// summed over the converted blocks.
template <typename Rows>
ClassCounts count_converted_rows(const FlyNN& model, const Rows& rows,
                                 const std::uint32_t* labels, CalibrationSample* sample = nullptr) {
  ClassCounts total(model.labels().size(), model.config().cells());
  for_each_view(rows, [&](const DataView& block, std::size_t first) {
    total += model.count(block, {labels + first, block.n_rows()}, {}, sample);
  });
  return total;
}

/// `width` outputs per row from `fn` (a model's per-row operation on a DataView): over the
/// rows' own view when they have one, else over converted blocks, each block's outputs
/// placed at its first row. Runs without the GIL.
template <typename T, typename Rows, typename Fn>
std::vector<T> outputs_per_row(const Rows& rows, std::size_t width, Fn fn) {
  py::gil_scoped_release nogil;
  if (const std::optional<DataView> v = rows.view()) return fn(*v);
  std::vector<T> out(rows.n_rows() * width);
  for_each_view(rows, [&](const DataView& block, std::size_t first) {
    const std::vector<T> part = fn(block);
    std::copy(part.begin(), part.end(), out.begin() + static_cast<std::ptrdiff_t>(first * width));
  });
  return out;
}

/// For standardising variants: the feature statistics of rows that must be converted, from
/// the same exact integer sums the library uses (a first pass over the converted blocks),
/// so that the counts pass hashes every row with the statistics of all of them.
template <typename Rows>
FeatureStats stats_of_converted_rows(const FlyNN& model, const Rows& rows) {
  FeatureSums sums(model.config().input_dim, model.config().value_transform);
  for_each_view(rows, [&](const DataView& block, std::size_t) {
    for (std::size_t r = 0; r < block.n_rows(); ++r) sums.add_row(block.floats() + r * block.row_stride());
  });
  return sums.stats();
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

ModelHandle::ModelHandle(const HyperParams& hyper, std::uint32_t n_features,
                         std::vector<std::string> labels, int threads)
    : model_(hyper.resolve(n_features, labels.size()), LabelSet(std::move(labels)), threads) {}

ModelHandle ModelHandle::from_bytes(const std::string& bytes, const std::string& source,
                                    int threads, std::uint64_t max_model_memory) {
  return ModelHandle(io::deserialize_model(bytes, source, threads, io::kDefaultMaxInputBytes,
                                           io::ModelMemoryLimit{max_model_memory}));
}

ModelHandle ModelHandle::load(const std::string& path, int threads,
                              std::uint64_t max_model_memory) {
  return ModelHandle(io::load_model(path, threads, io::kDefaultMaxInputBytes,
                                    io::ModelMemoryLimit{max_model_memory}));
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

void ModelHandle::fit(const py::array& X, const LabelIds& y) { fit_rows(NumpyRows(X), y); }
void ModelHandle::fit_sparse(const CsrRows& X, const LabelIds& y) { fit_rows(X, y); }

template <typename Rows>
void ModelHandle::fit_rows(const Rows& rows, const LabelIds& y) {
  const std::uint32_t* labels = checked_labels(y, rows);
  py::gil_scoped_release nogil;
  if (const std::optional<DataView> v = rows.view()) {
    model_.fit(*v, {labels, rows.n_rows()});  // the caller's memory, not copied
  } else {
    // fit = the counts of the rows, whatever the model held, summed over converted blocks,
    // then the calibration on the rows FlyNN::fit picks.
    if (model_.config().variant.standardize) model_.set_feature_stats(stats_of_converted_rows(model_, rows));
    CalibrationSample sample(model_.config(), rows.n_rows());
    model_.set_counts(count_converted_rows(model_, rows, labels, &sample));
    model_.set_provenance(Provenance{});  // as FlyNN::fit: exact counts of these rows
    model_.calibrate(sample);
  }
}

void ModelHandle::partial_fit(const py::array& X, const LabelIds& y) {
  partial_fit_rows(NumpyRows(X), y);
}
void ModelHandle::partial_fit_sparse(const CsrRows& X, const LabelIds& y) { partial_fit_rows(X, y); }

template <typename Rows>
void ModelHandle::partial_fit_rows(const Rows& rows, const LabelIds& y) {
  const std::uint32_t* labels = checked_labels(y, rows);
  py::gil_scoped_release nogil;
  if (const std::optional<DataView> v = rows.view()) {
    model_.partial_fit(*v, {labels, rows.n_rows()});
  } else {
    // Converted whole, as forget does, so that FlyNN::partial_fit's own rules (a DP release
    // takes no exact rows; statistics learned once, by the first batch; model unchanged on
    // error) apply to all rows at once instead of being repeated here.
    std::vector<float> converted(rows.n_rows() * rows.n_cols());
    rows.copy_rows(0, rows.n_rows(), converted.data());
    model_.partial_fit(DataView(converted.data(), rows.n_rows(), rows.n_cols()),
                       {labels, rows.n_rows()});
  }
}

void ModelHandle::forget(const py::array& X, const LabelIds& y) { forget_rows(NumpyRows(X), y); }
void ModelHandle::forget_sparse(const CsrRows& X, const LabelIds& y) { forget_rows(X, y); }

template <typename Rows>
void ModelHandle::forget_rows(const Rows& rows, const LabelIds& y) {
  const std::uint32_t* labels = checked_labels(y, rows);
  py::gil_scoped_release nogil;
  if (const std::optional<DataView> v = rows.view()) {
    model_.forget(*v, {labels, rows.n_rows()});
  } else {
    // Converted whole rather than in blocks, so that FlyNN::forget's own checks (no DP
    // model, no count below zero, model unchanged on error) apply to all rows at once;
    // forgetting is rare and usually concerns few rows.
    std::vector<float> converted(rows.n_rows() * rows.n_cols());
    rows.copy_rows(0, rows.n_rows(), converted.data());
    model_.forget(DataView(converted.data(), rows.n_rows(), rows.n_cols()),
                  {labels, rows.n_rows()});
  }
}

template <typename Rows>
py::tuple ModelHandle::calibration_loss_rows(const Rows& rows, const LabelIds& y, std::uint64_t total_rows) const {
  const std::uint32_t* labels = checked_labels(y, rows);
  CalibrationLoss loss(model_.counts(), {}, model_.config().rho);
  {
    py::gil_scoped_release nogil;
    CalibrationSample sample(model_.config(), total_rows);
    count_converted_rows(model_, rows, labels, &sample);
    loss = model_.calibration_loss(sample);
  }
  py::array_t<std::uint64_t> sums(static_cast<py::ssize_t>(loss.totals().size()));
  std::copy(loss.totals().begin(), loss.totals().end(), sums.mutable_data());
  return py::make_tuple(sums, loss.rows());
}

py::tuple ModelHandle::calibration_loss(const py::array& X, const LabelIds& y, std::uint64_t total_rows) const {
  return calibration_loss_rows(NumpyRows(X), y, total_rows);
}
py::tuple ModelHandle::calibration_loss_sparse(const CsrRows& X, const LabelIds& y, std::uint64_t total_rows) const {
  return calibration_loss_rows(X, y, total_rows);
}

py::array_t<double> ModelHandle::leave_one_out_scores(const py::array& X, const LabelIds& y) const {
  const NumpyRows rows(X);
  const std::uint32_t* labels = checked_labels(y, rows);
  const std::size_t L = model_.labels().size();
  std::vector<double> out(rows.n_rows() * L);
  {
    py::gil_scoped_release nogil;
    for_each_view(rows, [&](const DataView& block, std::size_t first) {
      const std::vector<double> part = model_.leave_one_out_scores(block, {labels + first, block.n_rows()});
      std::copy(part.begin(), part.end(), out.begin() + static_cast<std::ptrdiff_t>(first * L));
    });
  }
  return to_numpy(std::move(out), {static_cast<py::ssize_t>(rows.n_rows()), static_cast<py::ssize_t>(L)});
}

void ModelHandle::calibrate_from_losses(
    const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& sums, std::uint64_t rows) {
  model_.set_calibration(choose_calibration({sums.data(), static_cast<std::size_t>(sums.size())}, rows));
}

py::array_t<std::uint32_t> ModelHandle::predict(const py::array& X) const {
  return predict_rows(NumpyRows(X));
}
py::array_t<std::uint32_t> ModelHandle::predict_sparse(const CsrRows& X) const { return predict_rows(X); }

template <typename Rows>
py::array_t<std::uint32_t> ModelHandle::predict_rows(const Rows& rows) const {
  return to_numpy(outputs_per_row<std::uint32_t>(rows, 1, [&](const DataView& v) { return model_.predict(v); }),
                  {static_cast<py::ssize_t>(rows.n_rows())});
}

py::array_t<std::uint32_t> ModelHandle::hash(const py::array& X) const { return hash_rows(NumpyRows(X)); }
py::array_t<std::uint32_t> ModelHandle::hash_sparse(const CsrRows& X) const { return hash_rows(X); }

template <typename Rows>
py::array_t<std::uint32_t> ModelHandle::hash_rows(const Rows& rows) const {
  const std::size_t rho = model_.config().rho;
  return to_numpy(outputs_per_row<std::uint32_t>(rows, rho, [&](const DataView& v) { return model_.hash(v); }),
                  {static_cast<py::ssize_t>(rows.n_rows()), static_cast<py::ssize_t>(rho)});
}

py::array_t<double> ModelHandle::scores(const py::array& X) const {
  return per_class(NumpyRows(X), &FlyNN::scores);
}
py::array_t<double> ModelHandle::scores_sparse(const CsrRows& X) const {
  return per_class(X, &FlyNN::scores);
}

py::array_t<double> ModelHandle::logits(const py::array& X) const {
  return per_class(NumpyRows(X), &FlyNN::logits);
}
py::array_t<double> ModelHandle::logits_sparse(const CsrRows& X) const {
  return per_class(X, &FlyNN::logits);
}

py::array_t<double> ModelHandle::predict_proba(const py::array& X) const {
  return per_class(NumpyRows(X), &FlyNN::predict_proba);
}
py::array_t<double> ModelHandle::predict_proba_sparse(const CsrRows& X) const {
  return per_class(X, &FlyNN::predict_proba);
}

template <typename Rows>
py::array_t<double> ModelHandle::per_class(const Rows& rows, PerClassFn fn) const {
  const std::size_t L = model_.labels().size();
  return to_numpy(outputs_per_row<double>(rows, L, [&](const DataView& v) { return (model_.*fn)(v, PredictOptions{}); }),
                  {static_cast<py::ssize_t>(rows.n_rows()), static_cast<py::ssize_t>(L)});
}

py::tuple ModelHandle::counts() const {
  return py::make_tuple(counts_array(model_.counts()), rows_array(model_.counts()));
}

void ModelHandle::set_counts(
    const py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>& counts,
    const py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>& rows,
    const Provenance& provenance) {
  const std::size_t L = model_.labels().size();
  const std::uint32_t m = model_.config().cells();
  if (counts.ndim() != 2 || static_cast<std::size_t>(counts.shape(0)) != L ||
      static_cast<std::size_t>(counts.shape(1)) != m)
    throw std::invalid_argument("counts must have shape (" + std::to_string(L) + ", " +
                                std::to_string(m) + ") (classes × count cells: m, and the pair cells)");
  if (rows.ndim() != 1 || static_cast<std::size_t>(rows.shape(0)) != L)
    throw std::invalid_argument("rows per class must have shape (" + std::to_string(L) + ",)");
  ClassCounts c(L, m);
  std::copy(counts.data(), counts.data() + L * m, c.values().begin());
  std::copy(rows.data(), rows.data() + L, c.rows_per_class().begin());
  model_.set_counts(std::move(c));
  model_.set_provenance(provenance);
}

}  // namespace flynn::python
