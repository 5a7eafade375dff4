#include "sparse_rows.hpp"

#include "model_handle.hpp"
#include "numpy_rows.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace flynn::python {

namespace {

// Whether `a` is 1-D, contiguous and of element type T.
template <typename T>
bool is_vector_of(const py::array& a) {
  return a.ndim() == 1 && py::array_t<T>::check_(a) &&
         (a.shape(0) <= 1 || a.strides(0) == static_cast<py::ssize_t>(sizeof(T)));
}

}  // namespace

CsrRows::CsrRows(py::array indptr, py::array indices, py::array data, std::size_t n_cols)
    : indptr_(std::move(indptr)), indices_(std::move(indices)), data_(std::move(data)), n_cols_(n_cols) {
  auto index_kind = [](const py::array& a, const char* what) {
    if (is_vector_of<std::int32_t>(a)) return false;
    if (is_vector_of<std::int64_t>(a)) return true;
    throw std::invalid_argument(std::string("sparse matrix ") + what +
                                ": expected a contiguous 1-D array of int32 or int64");
  };
  wide_indptr_ = index_kind(indptr_, "indptr");
  wide_indices_ = index_kind(indices_, "indices");
  if (is_vector_of<float>(data_)) {
    type_ = Type::Float32;
  } else if (is_vector_of<double>(data_)) {
    type_ = Type::Float64;
  } else if (is_vector_of<std::uint8_t>(data_)) {
    type_ = Type::UInt8;
  } else {
    throw std::invalid_argument(
        "sparse matrix data: expected a contiguous 1-D array of float32, float64 or uint8");
  }
  if (n_cols_ == 0) throw std::invalid_argument("the rows have no features (0 columns)");
  if (indptr_.shape(0) < 1) throw std::invalid_argument("sparse matrix indptr is empty");
  if (indices_.shape(0) != data_.shape(0))
    throw std::invalid_argument("sparse matrix: indices and data differ in length");
  n_rows_ = static_cast<std::size_t>(indptr_.shape(0)) - 1;
  const std::uint64_t stored = static_cast<std::uint64_t>(indices_.shape(0));
  // Every later read relies on these checks: row r's entries are [indptr[r], indptr[r+1]),
  // within the arrays, with ascending columns below n_cols.
  if (pointer(0) != 0) throw std::invalid_argument("sparse matrix indptr[0] is not 0");
  for (std::size_t r = 0; r < n_rows_; ++r) {
    const std::uint64_t begin = pointer(r), end = pointer(r + 1);
    if (end < begin || end > stored)
      throw std::invalid_argument("sparse matrix indptr is not ascending within the " +
                                  std::to_string(stored) + " entries (row " + std::to_string(r) + ")");
    for (std::uint64_t k = begin; k < end; ++k) {
      const std::uint64_t c = index(k);
      if (c >= n_cols_)
        throw std::invalid_argument("sparse matrix row " + std::to_string(r) + ": column index " +
                                    std::to_string(static_cast<std::int64_t>(c)) +
                                    " is outside [0, " + std::to_string(n_cols_) + ")");
      if (k > begin && c <= index(k - 1))
        throw std::invalid_argument("sparse matrix row " + std::to_string(r) +
                                    ": column indices are not strictly ascending "
                                    "(call sum_duplicates() first)");
    }
  }
  nnz_ = static_cast<std::size_t>(pointer(n_rows_));
}

// Negative int64 values become huge unsigned ones, which the range checks refuse.
std::uint64_t CsrRows::pointer(std::size_t i) const {
  return wide_indptr_ ? static_cast<std::uint64_t>(static_cast<const std::int64_t*>(indptr_.data())[i])
                      : static_cast<std::uint64_t>(static_cast<std::int64_t>(
                            static_cast<const std::int32_t*>(indptr_.data())[i]));
}

std::uint64_t CsrRows::index(std::size_t k) const {
  return wide_indices_ ? static_cast<std::uint64_t>(static_cast<const std::int64_t*>(indices_.data())[k])
                       : static_cast<std::uint64_t>(static_cast<std::int64_t>(
                             static_cast<const std::int32_t*>(indices_.data())[k]));
}

double CsrRows::value(std::size_t k) const {
  switch (type_) {
    case Type::Float32: return static_cast<const float*>(data_.data())[k];
    case Type::Float64: return static_cast<const double*>(data_.data())[k];
    case Type::UInt8: return static_cast<const std::uint8_t*>(data_.data())[k];
  }
  return 0;
}

void CsrRows::copy_rows(std::size_t first, std::size_t count, float* out) const {
  std::fill(out, out + count * n_cols_, 0.0f);
  for (std::size_t r = 0; r < count; ++r) {
    float* row = out + r * n_cols_;
    for (std::uint64_t k = pointer(first + r), end = pointer(first + r + 1); k < end; ++k)
      // double → float rounds to nearest, as the dense arrays' conversion does.
      row[index(k)] = static_cast<float>(value(k));
  }
}

std::size_t CsrRows::block_rows() const { return conversion_block_rows(n_cols_); }

}  // namespace flynn::python

namespace flynn::python {

void bind_sparse_rows(py::module_& m) {
  py::class_<CsrRows>(m, "CsrRows")
      .def(py::init<py::array, py::array, py::array, std::size_t>(), py::arg("indptr"),
           py::arg("indices"), py::arg("data"), py::arg("n_cols"))
      .def_property_readonly("shape", [](const CsrRows& r) { return py::make_tuple(r.n_rows(), r.n_cols()); })
      .def_property_readonly("nnz", &CsrRows::nnz);
  // Overloads beside the numpy ones: pybind11 picks by the argument's type.
  auto model = py::reinterpret_borrow<py::class_<ModelHandle>>(m.attr("Model"));
  model.def("fit", &ModelHandle::fit_sparse, py::arg("X"), py::arg("y"))
      .def("partial_fit", &ModelHandle::partial_fit_sparse,
           py::arg("X"), py::arg("y"))
      .def("forget", &ModelHandle::forget_sparse, py::arg("X"),
           py::arg("y"))
      .def("predict", &ModelHandle::predict_sparse, py::arg("X"))
      .def("scores", &ModelHandle::scores_sparse, py::arg("X"))
      .def("hash", &ModelHandle::hash_sparse, py::arg("X"))
      .def("predict_proba", &ModelHandle::predict_proba_sparse,
           py::arg("X"))
      .def("logits", &ModelHandle::logits_sparse, py::arg("X"))
      .def("calibration_loss", &ModelHandle::calibration_loss_sparse, py::arg("X"), py::arg("y"),
           py::arg("total_rows"));
}

}  // namespace flynn::python
