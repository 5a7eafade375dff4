#include "core/signed_columns.hpp"

#include <algorithm>

namespace flynn::kernels {

SignedColumns SignedColumns::build(const LiftingMatrix& lifting, std::uint32_t w) {
  const std::uint32_t m = lifting.rows(), s = lifting.ones_per_row();
  // A row's columns ascend, so its positive columns (< w) come first.
  std::vector<std::uint16_t> positives_of(m);
  std::vector<std::uint32_t> first(std::size_t(s) + 2, 0);
  for (std::uint32_t j = 0; j < m; ++j) {
    const std::uint32_t* row = lifting.row(j);
    const auto p = static_cast<std::uint16_t>(std::lower_bound(row, row + s, w) - row);
    positives_of[j] = p;
    ++first[std::size_t(p) + 1];
  }
  for (std::size_t p = 1; p < first.size(); ++p) first[p] += first[p - 1];
  SignedColumns out;
  out.columns.resize(std::size_t(m) * s);
  out.units.resize(m);
  out.positives.resize(m);
  for (std::uint32_t j = 0; j < m; ++j) {
    const std::uint32_t pos = first[positives_of[j]]++;
    out.units[pos] = j;
    out.positives[pos] = positives_of[j];
    const std::uint32_t* row = lifting.row(j);
    std::uint16_t* c = out.columns.data() + std::size_t(pos) * s;
    for (std::uint32_t k = 0; k < s; ++k)
      c[k] = static_cast<std::uint16_t>(row[k] < w ? row[k] : row[k] - w);
  }
  return out;
}

}  // namespace flynn::kernels
