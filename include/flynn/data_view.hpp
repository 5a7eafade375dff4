#pragma once
// A non-owning view of row-major feature data (float or uint8), so that a caller that
// already holds its features in memory (a NumPy array, an image buffer, a memory-mapped
// file) can train and predict without copying them into a Dataset.
#include <cstddef>
#include <cstdint>
#include <span>

namespace flynn {

struct Dataset;

/// The element type of the features a DataView points at.
enum class ElementType : std::uint8_t {
  Float32,  ///< `float`, any finite values
  UInt8,    ///< `std::uint8_t`, e.g. pixels 0..255: hashed by the exact integer kernel,
            ///< exactly as a Dataset holding the same values as floats would be
};

/// n_rows × n_cols features, row r starting at data + r · row_stride elements.
///
/// Ownership and lifetime: a DataView owns nothing. The memory it points at must stay
/// valid and unchanged for as long as a call that receives the view runs (fit, predict,
/// …); no flynn object keeps a view after the call returns, so the caller may free or
/// reuse the memory as soon as the call has returned. A view is cheap to copy (pass it by
/// value).
///
/// Results depend only on the values: a float view and a uint8 view of the same numbers,
/// and a Dataset holding them, give identical hashes, counts, models and predictions.
class DataView {
 public:
  /// An empty view (0 × 0).
  DataView() = default;

  /// n_rows × n_cols floats; `row_stride` elements between row starts (0 = n_cols, i.e.
  /// densely packed). Throws flynn::Error when row_stride < n_cols or when `data` is null
  /// while there are rows and columns.
  DataView(const float* data, std::size_t n_rows, std::size_t n_cols, std::size_t row_stride = 0);
  /// n_rows × n_cols bytes; `row_stride` as above.
  DataView(const std::uint8_t* data, std::size_t n_rows, std::size_t n_cols,
           std::size_t row_stride = 0);

  /// Densely packed rows of `n_cols` floats covering all of `data`. Throws flynn::Error
  /// unless data.size() is a multiple of n_cols (n_cols must be > 0 for non-empty data).
  DataView(std::span<const float> data, std::size_t n_cols);
  /// Densely packed rows of `n_cols` bytes covering all of `data`; as above.
  DataView(std::span<const std::uint8_t> data, std::size_t n_cols);

  /// The features of a Dataset (valid while the Dataset lives and is not modified).
  explicit DataView(const Dataset& data);

  /// What the elements are.
  ElementType element_type() const { return type_; }
  /// Number of rows.
  std::size_t n_rows() const { return n_rows_; }
  /// Features per row.
  std::size_t n_cols() const { return n_cols_; }
  /// Elements (not bytes) from the start of one row to the start of the next.
  std::size_t row_stride() const { return row_stride_; }
  /// Whether the view has no rows.
  bool empty() const { return n_rows_ == 0; }

  /// The float elements, or nullptr when element_type() is not Float32.
  const float* floats() const {
    return type_ == ElementType::Float32 ? static_cast<const float*>(data_) : nullptr;
  }
  /// The byte elements, or nullptr when element_type() is not UInt8.
  const std::uint8_t* bytes() const {
    return type_ == ElementType::UInt8 ? static_cast<const std::uint8_t*>(data_) : nullptr;
  }

  /// Rows [first, first + count) as a view of the same memory. Throws flynn::Error when
  /// the range does not lie within the view.
  DataView rows(std::size_t first, std::size_t count) const;

 private:
  const void* data_ = nullptr;
  ElementType type_ = ElementType::Float32;
  std::size_t n_rows_ = 0;
  std::size_t n_cols_ = 0;
  std::size_t row_stride_ = 0;
};

}  // namespace flynn
