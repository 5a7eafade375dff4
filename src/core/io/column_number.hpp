#pragma once
// Internal: a column given by number (--label-col 3, --id-col -1, an ARFF class attribute)
// as a 0-based index. The one home of that rule for every loader; not part of the public API.
#include <cstddef>
#include <optional>

namespace flynn::io::detail {

/// The 0-based column of the 1-based column number `k` among `ncols` columns, negative
/// numbers counting from the end (-1 is the last); nullopt when k is 0 or out of range.
inline std::optional<std::size_t> column_from_number(long k, std::size_t ncols) {
  const long n = static_cast<long>(ncols);
  if (k == 0 || k > n || k < -n) return std::nullopt;
  return static_cast<std::size_t>(k > 0 ? k - 1 : n + k);
}

}  // namespace flynn::io::detail
