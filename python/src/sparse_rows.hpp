#pragma once
// Reading a scipy.sparse CSR matrix (indptr, indices, data) as flynn rows without making
// it dense: rows are expanded block by block into float32 buffers, as the LIBSVM reader
// expands its chunks, and the core's hash then takes its sparse path for rows with few
// non-zeros. A matrix and its dense equal give the same models and predictions.
#include <cstddef>
#include <cstdint>
#include <optional>

#include <pybind11/numpy.h>

#include "flynn/data_view.hpp"

namespace flynn::python {

/// A borrowed view of a canonical CSR matrix: per row, strictly ascending column indices
/// (no duplicates, which the Python side sums first). Indices int32 or int64, values
/// float32, float64 or uint8. Holds references to the three arrays, so they stay alive;
/// construct it while holding the GIL, use it with the GIL released.
class CsrRows {
 public:
  /// Throws std::invalid_argument (ValueError) unless indptr has n_rows + 1 entries
  /// rising from 0 to at most len(indices) = len(data), and every row's indices are
  /// ascending within [0, n_cols).
  CsrRows(pybind11::array indptr, pybind11::array indices, pybind11::array data,
          std::size_t n_cols);

  std::size_t n_rows() const { return n_rows_; }
  std::size_t n_cols() const { return n_cols_; }
  /// The stored entries (non-zeros, or explicit zeros).
  std::size_t nnz() const { return nnz_; }

  /// Never a view: sparse rows are always expanded (for_each_view then converts blocks).
  std::optional<DataView> view() const { return std::nullopt; }
  /// Writes rows [first, first + count) as dense row-major float32 into `out`
  /// (count × n_cols values); float64 values are rounded to the nearest float32, as for
  /// dense arrays.
  void copy_rows(std::size_t first, std::size_t count, float* out) const;
  /// Rows per conversion block (conversion_block_rows).
  std::size_t block_rows() const;

 private:
  std::uint64_t pointer(std::size_t i) const;
  std::uint64_t index(std::size_t k) const;
  double value(std::size_t k) const;

  pybind11::array indptr_, indices_, data_;
  bool wide_indptr_ = false, wide_indices_ = false;  // int64 rather than int32
  enum class Type { Float32, Float64, UInt8 } type_ = Type::Float32;
  std::size_t n_rows_ = 0, n_cols_ = 0, nnz_ = 0;
};

}  // namespace flynn::python

namespace flynn::python {

/// Registers _flynn.CsrRows and the Model methods (fit, partial_fit, forget, predict,
/// scores, predict_proba) that take one; call after the Model class is registered.
void bind_sparse_rows(pybind11::module_& m);

}  // namespace flynn::python
