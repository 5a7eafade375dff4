#include "flynn/data_view.hpp"

#include <fmt/format.h>

#include "flynn/dataset.hpp"
#include "flynn/error.hpp"

namespace flynn {

namespace {

std::size_t checked_stride(const void* data, std::size_t n_rows, std::size_t n_cols,
                           std::size_t row_stride) {
  const std::size_t stride = row_stride == 0 ? n_cols : row_stride;
  if (stride < n_cols)
    throw Error(fmt::format("row stride {} is smaller than the {} columns of a row", stride,
                            n_cols));
  if (data == nullptr && n_rows > 0 && n_cols > 0)
    throw Error(fmt::format("no data pointer for {} rows × {} columns", n_rows, n_cols));
  return stride;
}

std::size_t rows_of_span(std::size_t elements, std::size_t n_cols) {
  if (elements == 0) return 0;
  if (n_cols == 0)
    throw Error(fmt::format("{} elements cannot be split into rows of 0 columns", elements));
  if (elements % n_cols != 0)
    throw Error(fmt::format("{} elements are not a whole number of rows of {} columns",
                            elements, n_cols));
  return elements / n_cols;
}

}  // namespace

DataView::DataView(const float* data, std::size_t n_rows, std::size_t n_cols,
                   std::size_t row_stride)
    : data_(data),
      type_(ElementType::Float32),
      n_rows_(n_rows),
      n_cols_(n_cols),
      row_stride_(checked_stride(data, n_rows, n_cols, row_stride)) {}

DataView::DataView(const std::uint8_t* data, std::size_t n_rows, std::size_t n_cols,
                   std::size_t row_stride)
    : data_(data),
      type_(ElementType::UInt8),
      n_rows_(n_rows),
      n_cols_(n_cols),
      row_stride_(checked_stride(data, n_rows, n_cols, row_stride)) {}

DataView::DataView(std::span<const float> data, std::size_t n_cols)
    : DataView(data.data(), rows_of_span(data.size(), n_cols), n_cols) {}

DataView::DataView(std::span<const std::uint8_t> data, std::size_t n_cols)
    : DataView(data.data(), rows_of_span(data.size(), n_cols), n_cols) {}

DataView::DataView(const Dataset& data)
    : DataView(data.features.data(), data.n_rows, data.n_features) {}

DataView DataView::rows(std::size_t first, std::size_t count) const {
  if (first > n_rows_ || count > n_rows_ - first)
    throw Error(fmt::format("rows [{}, {}) lie outside a view of {} rows", first, first + count,
                            n_rows_));
  DataView v = *this;
  const std::size_t offset = first * row_stride_;
  if (type_ == ElementType::Float32) {
    v.data_ = static_cast<const float*>(data_) + offset;
  } else {
    v.data_ = static_cast<const std::uint8_t*>(data_) + offset;
  }
  v.n_rows_ = count;
  return v;
}

}  // namespace flynn
