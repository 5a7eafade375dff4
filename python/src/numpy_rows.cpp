#include "numpy_rows.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace flynn::python {

namespace {

template <typename T>
void copy_block(const char* data, std::ptrdiff_t row_stride, std::ptrdiff_t col_stride,
                std::size_t first, std::size_t count, std::size_t cols, float* out) {
  for (std::size_t r = 0; r < count; ++r) {
    const char* row = data + static_cast<std::ptrdiff_t>(first + r) * row_stride;
    float* dst = out + r * cols;
    if (col_stride == static_cast<std::ptrdiff_t>(sizeof(T))) {
      // Contiguous row (C order of another element type): a plain converting loop the
      // compiler vectorises.
      const T* src = reinterpret_cast<const T*>(row);
      for (std::size_t c = 0; c < cols; ++c) dst[c] = static_cast<float>(src[c]);
    } else {
      for (std::size_t c = 0; c < cols; ++c)
        dst[c] = static_cast<float>(
            *reinterpret_cast<const T*>(row + static_cast<std::ptrdiff_t>(c) * col_stride));
    }
  }
}

}  // namespace

NumpyRows::NumpyRows(const py::array& array) {
  if (array.ndim() != 2)
    throw std::invalid_argument("expected a 2-D array of rows, got " +
                                std::to_string(array.ndim()) + " dimension(s)");
  // Equivalent dtypes, not identical objects: arrays that joblib memory-maps or unpickles
  // carry their own (equal) dtype instances.
  if (py::array_t<float>::check_(array)) {
    type_ = ElementType::Float32;
  } else if (py::array_t<double>::check_(array)) {
    type_ = ElementType::Float64;
  } else if (py::array_t<std::uint8_t>::check_(array)) {
    type_ = ElementType::UInt8;
  } else {
    throw std::invalid_argument("unsupported element type " +
                                array.dtype().attr("str").cast<std::string>() + " (float32, float64 or uint8)");
  }
  data_ = static_cast<const char*>(array.data());
  n_rows_ = static_cast<std::size_t>(array.shape(0));
  n_cols_ = static_cast<std::size_t>(array.shape(1));
  row_stride_ = array.strides(0);
  col_stride_ = array.strides(1);
  if (n_cols_ == 0) throw std::invalid_argument("the rows have no features (0 columns)");
}

const float* NumpyRows::contiguous_float32() const {
  const bool c_order = col_stride_ == 4 &&
                       (n_rows_ <= 1 || row_stride_ == static_cast<std::ptrdiff_t>(4 * n_cols_));
  return type_ == ElementType::Float32 && c_order ? reinterpret_cast<const float*>(data_)
                                                  : nullptr;
}

const std::uint8_t* NumpyRows::contiguous_uint8() const {
  const bool c_order = col_stride_ == 1 &&
                       (n_rows_ <= 1 || row_stride_ == static_cast<std::ptrdiff_t>(n_cols_));
  return type_ == ElementType::UInt8 && c_order
             ? reinterpret_cast<const std::uint8_t*>(data_)
             : nullptr;
}

std::size_t NumpyRows::block_rows() const {
  constexpr std::size_t kBlockBytes = std::size_t{4} << 20;
  return std::max<std::size_t>(1, kBlockBytes / (4 * n_cols_));
}

void NumpyRows::copy_rows(std::size_t first, std::size_t count, float* out) const {
  switch (type_) {
    case ElementType::Float32:
      copy_block<float>(data_, row_stride_, col_stride_, first, count, n_cols_, out);
      break;
    case ElementType::Float64:
      copy_block<double>(data_, row_stride_, col_stride_, first, count, n_cols_, out);
      break;
    case ElementType::UInt8:
      copy_block<std::uint8_t>(data_, row_stride_, col_stride_, first, count, n_cols_, out);
      break;
  }
}

Dataset rows_dataset(const NumpyRows& rows, std::size_t first, std::size_t count,
                     const std::uint32_t* labels, const LabelSet& classes) {
  Dataset d;
  d.source = "<array>";
  d.n_rows = count;
  d.n_features = rows.n_cols();
  d.features.resize(count * rows.n_cols());
  rows.copy_rows(first, count, d.features.data());
  d.classes = classes;
  d.row_origin.resize(count);
  for (std::size_t r = 0; r < count; ++r) d.row_origin[r] = first + r + 1;
  if (labels) {
    d.has_labels = true;
    d.labels.assign(labels + first, labels + first + count);
  }
  return d;
}

}  // namespace flynn::python
