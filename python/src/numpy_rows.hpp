#pragma once
// Reading a 2-D numpy array (float32, float64 or uint8; C order, Fortran order or any
// strides) as flynn rows, copying it only when its layout requires.
//
// flynn's kernels read rows of float32 or uint8 values, each row contiguous, rows any
// fixed distance apart (flynn::DataView). A float32 or uint8 array in C order, or a slice
// of rows of one, is handed to them as it is (view()). Any other array (float64, Fortran
// order, column slices) is converted block by block (copy_rows), so converting never holds
// more than one block of float32 rows, whatever the size of the array.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <pybind11/numpy.h>

#include "flynn/data_view.hpp"
#include "flynn/dataset.hpp"

namespace flynn::python {

/// A borrowed view of a 2-D numpy array. Construct it while holding the GIL; the caller
/// keeps the array alive (and unmodified) for as long as the view is used, which may be
/// with the GIL released.
class NumpyRows {
 public:
  /// Throws std::invalid_argument (ValueError in Python) unless `array` is 2-D with
  /// element type float32, float64 or uint8 (native byte order), or when it has no columns.
  explicit NumpyRows(const pybind11::array& array);

  std::size_t n_rows() const { return n_rows_; }
  std::size_t n_cols() const { return n_cols_; }

  /// The rows as a DataView over the array's own memory, when the layout allows it:
  /// float32 or uint8, each row contiguous, rows a non-negative whole number of elements
  /// apart. std::nullopt otherwise (then use copy_rows).
  std::optional<DataView> view() const;

  /// Writes rows [first, first + count) as row-major float32 into `out`
  /// (count × n_cols values). Float64 values are rounded to the nearest float32, as the
  /// CLI's parser rounds decimal text.
  void copy_rows(std::size_t first, std::size_t count, float* out) const;

  /// Rows per conversion block: about 4 MiB of float32, at least one row.
  std::size_t block_rows() const;

 private:
  enum class Type { Float32, Float64, UInt8 };
  const char* data_ = nullptr;
  std::size_t n_rows_ = 0;
  std::size_t n_cols_ = 0;
  std::ptrdiff_t row_stride_ = 0;  // bytes between consecutive rows
  std::ptrdiff_t col_stride_ = 0;  // bytes between consecutive columns
  std::size_t item_size_ = 4;
  Type type_ = Type::Float32;
};

/// All rows as a labelled Dataset (a float32 copy; source "<array>", row_origin the
/// 1-based row numbers), for operations that split or resample the rows (federated
/// simulation, tuning). `ids` holds one class id per row, into `classes`.
Dataset labelled_dataset(const NumpyRows& rows, const std::uint32_t* ids, const LabelSet& classes);

/// A numpy array that takes ownership of `values` (no copy of the result).
template <typename T>
pybind11::array_t<T> to_numpy(std::vector<T>&& values, std::vector<pybind11::ssize_t> shape) {
  auto* owned = new std::vector<T>(std::move(values));
  pybind11::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return pybind11::array_t<T>(shape, owned->data(), free_when_done);
}

/// Rows per conversion block of rows `n_cols` wide: about 4 MiB of float32, at least one row.
std::size_t conversion_block_rows(std::size_t n_cols);

/// Calls fn(view, first_row) over all rows of `rows` (NumpyRows, or CsrRows: anything with
/// view, copy_rows and block_rows): once, over the array's own memory, when its layout
/// allows; otherwise once per block of converted float32 rows (one block buffer, reused).
template <typename Rows, typename Fn>
void for_each_view(const Rows& rows, Fn&& fn) {
  if (const std::optional<DataView> v = rows.view()) {
    fn(*v, std::size_t{0});
    return;
  }
  const std::size_t step = rows.block_rows();
  std::vector<float> buffer(std::min(step, rows.n_rows()) * rows.n_cols());
  for (std::size_t first = 0; first < rows.n_rows(); first += step) {
    const std::size_t count = std::min(step, rows.n_rows() - first);
    rows.copy_rows(first, count, buffer.data());
    fn(DataView(buffer.data(), count, rows.n_cols()), first);
  }
}

}  // namespace flynn::python
