#pragma once
// Reading a 2-D numpy array (float32, float64 or uint8; C order, Fortran order or any
// strides) as flynn rows, without copying it.
//
// flynn's kernels take row-major float32 (or uint8) rows. An array already in that layout
// is handed to them as it is (contiguous_float32 / contiguous_uint8). Any other layout is
// converted block by block (copy_rows), so converting never needs more than one block of
// float32 rows in memory, whatever the size of the array.
#include <cstddef>
#include <cstdint>

#include <pybind11/numpy.h>

#include "flynn/dataset.hpp"

namespace flynn::python {

/// The element types flynn reads directly; everything else is converted in Python first.
enum class ElementType { Float32, Float64, UInt8 };

/// A borrowed view of a 2-D numpy array. Construct it while holding the GIL; the caller
/// keeps the array alive (and unmodified) for as long as the view is used, which may be
/// with the GIL released.
class NumpyRows {
 public:
  /// Throws std::invalid_argument (ValueError in Python) unless `array` is 2-D with a
  /// supported element type, or when it has no columns.
  explicit NumpyRows(const pybind11::array& array);

  std::size_t n_rows() const { return n_rows_; }
  std::size_t n_cols() const { return n_cols_; }
  ElementType type() const { return type_; }

  /// The rows as row-major float32 when the array is exactly that (else nullptr).
  const float* contiguous_float32() const;
  /// The rows as row-major uint8 when the array is exactly that (else nullptr).
  const std::uint8_t* contiguous_uint8() const;

  /// Writes rows [first, first + count) as row-major float32 into `out`
  /// (count × n_cols values). Float64 values are rounded to the nearest float32, as the
  /// CLI's parser rounds decimal text.
  void copy_rows(std::size_t first, std::size_t count, float* out) const;

  /// Rows per conversion block: about 4 MiB of float32, at least one row.
  std::size_t block_rows() const;

 private:
  const char* data_ = nullptr;
  std::size_t n_rows_ = 0;
  std::size_t n_cols_ = 0;
  std::ptrdiff_t row_stride_ = 0;  // bytes between consecutive rows
  std::ptrdiff_t col_stride_ = 0;  // bytes between consecutive columns
  ElementType type_ = ElementType::Float32;
};

/// Rows [first, first + count) of `rows` as a Dataset of float32 rows (source "<array>",
/// row_origin the 1-based row numbers): the form every core operation takes. Labelled,
/// with ids into `classes`, when `labels` (one id per row of `rows`) is given.
Dataset rows_dataset(const NumpyRows& rows, std::size_t first, std::size_t count,
                     const std::uint32_t* labels, const LabelSet& classes);

}  // namespace flynn::python
