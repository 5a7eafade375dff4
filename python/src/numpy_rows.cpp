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
      // A contiguous row of another element type (float64 in C order): a plain converting
      // loop the compiler vectorises.
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
    type_ = Type::Float32;
  } else if (py::array_t<double>::check_(array)) {
    type_ = Type::Float64;
  } else if (py::array_t<std::uint8_t>::check_(array)) {
    type_ = Type::UInt8;
  } else {
    throw std::invalid_argument("unsupported element type " +
                                array.dtype().attr("str").cast<std::string>() +
                                " (float32, float64 or uint8 in native byte order)");
  }
  data_ = static_cast<const char*>(array.data());
  n_rows_ = static_cast<std::size_t>(array.shape(0));
  n_cols_ = static_cast<std::size_t>(array.shape(1));
  row_stride_ = array.strides(0);
  col_stride_ = array.strides(1);
  item_size_ = static_cast<std::size_t>(array.itemsize());
  if (n_cols_ == 0) throw std::invalid_argument("the rows have no features (0 columns)");
}

std::optional<DataView> NumpyRows::view() const {
  if (type_ == Type::Float64) return std::nullopt;
  const auto item = static_cast<std::ptrdiff_t>(item_size_);
  if (n_cols_ > 1 && col_stride_ != item) return std::nullopt;
  std::size_t stride = n_cols_;  // in elements; any value is right for a single row
  if (n_rows_ > 1) {
    if (row_stride_ < 0 || row_stride_ % item != 0) return std::nullopt;
    stride = static_cast<std::size_t>(row_stride_ / item);
    if (stride < n_cols_) return std::nullopt;  // overlapping rows (e.g. broadcast)
  }
  if (type_ == Type::Float32)
    return DataView(reinterpret_cast<const float*>(data_), n_rows_, n_cols_, stride);
  return DataView(reinterpret_cast<const std::uint8_t*>(data_), n_rows_, n_cols_, stride);
}

std::size_t conversion_block_rows(std::size_t n_cols) {
  constexpr std::size_t kBlockBytes = std::size_t{4} << 20;
  return std::max<std::size_t>(1, kBlockBytes / (4 * n_cols));
}

std::size_t NumpyRows::block_rows() const { return conversion_block_rows(n_cols_); }

void NumpyRows::copy_rows(std::size_t first, std::size_t count, float* out) const {
  switch (type_) {
    case Type::Float32:
      copy_block<float>(data_, row_stride_, col_stride_, first, count, n_cols_, out);
      break;
    case Type::Float64:
      copy_block<double>(data_, row_stride_, col_stride_, first, count, n_cols_, out);
      break;
    case Type::UInt8:
      copy_block<std::uint8_t>(data_, row_stride_, col_stride_, first, count, n_cols_, out);
      break;
  }
}

Dataset labelled_dataset(const NumpyRows& rows, const std::uint32_t* ids, const LabelSet& classes) {
  Dataset all;
  all.source = "<array>";
  all.n_rows = rows.n_rows();
  all.n_features = rows.n_cols();
  all.features.resize(rows.n_rows() * rows.n_cols());
  rows.copy_rows(0, rows.n_rows(), all.features.data());
  all.has_labels = true;
  all.labels.assign(ids, ids + rows.n_rows());
  all.classes = classes;
  all.row_origin.resize(rows.n_rows());
  for (std::size_t r = 0; r < rows.n_rows(); ++r) all.row_origin[r] = r + 1;
  return all;
}

}  // namespace flynn::python
