#include "core/sparse_hash.hpp"

namespace flynn::kernels {

ColumnUnits::ColumnUnits(const LiftingMatrix& M) : start_(std::size_t(M.columns()) + 1, 0) {
  const std::uint32_t s = M.ones_per_row();
  for (std::uint32_t u = 0; u < M.rows(); ++u)
    for (std::uint32_t k = 0; k < s; ++k) ++start_[M.row(u)[k] + 1];
  for (std::size_t f = 1; f < start_.size(); ++f) start_[f] += start_[f - 1];
  units_.resize(start_.back());
  std::vector<std::uint64_t> next(start_.begin(), start_.end() - 1);
  for (std::uint32_t u = 0; u < M.rows(); ++u)
    for (std::uint32_t k = 0; k < s; ++k) units_[next[M.row(u)[k]]++] = u;
}

template <typename T>
void SparseRowHasher<T>::hash(const ColumnUnits& lists, std::uint32_t m, std::uint32_t rho,
                              const std::uint32_t* columns, const T* values, std::size_t nnz,
                              std::uint32_t offset, std::uint32_t* winners) {
  // Branch-free scatter into a zeroed activation vector. A unit no non-zero reaches keeps
  // exactly 0, which is also what the dense kernels compute for it, so touched and
  // untouched units need no distinction.
  activation_.assign(m, T(0));
  for (std::size_t j = 0; j < nnz; ++j) {
    const T v = values[j];
    for (const std::uint32_t* u = lists.begin(columns[j]); u != lists.end(columns[j]); ++u)
      activation_[*u] += v;
  }
  topk_.reset(1, rho, m);
  topk_.set_offset(0, offset);
  const T* thr = topk_.thresholds();
  for (std::uint32_t u = 0; u < m; ++u)
    if (!(activation_[u] < thr[0])) topk_.offer(0, activation_[u], u);
  topk_.winners(0, winners);
}

template class SparseRowHasher<float>;
template class SparseRowHasher<std::int32_t>;

}  // namespace flynn::kernels
