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
  if (activation_.size() != m) {
    activation_.assign(m, T(0));
    touched_.assign(m, 0);
  }
  touched_units_.clear();
  for (std::size_t j = 0; j < nnz; ++j) {
    const T v = values[j];
    for (const std::uint32_t* u = lists.begin(columns[j]); u != lists.end(columns[j]); ++u) {
      if (touched_[*u]) {
        activation_[*u] += v;
      } else {
        touched_[*u] = 1;
        activation_[*u] = v;
        touched_units_.push_back(*u);
      }
    }
  }
  topk_.reset(1, rho, m);
  topk_.set_offset(0, offset);
  const T* thr = topk_.thresholds();
  for (std::uint32_t u : touched_units_)
    if (!(activation_[u] < thr[0])) topk_.offer(0, activation_[u], u);
  // Untouched units all sit at exactly 0; in tie-key order (rotation from `offset`) the
  // first one that cannot enter ends the scan, since every later one ranks lower still.
  for (std::uint32_t key = 0; key < m; ++key) {
    const std::uint32_t u = key < m - offset ? key + offset : key - (m - offset);
    if (touched_[u]) continue;
    if (thr[0] > T(0)) break;
    if (!topk_.would_enter(0, T(0), u)) break;
    topk_.offer(0, T(0), u);
  }
  for (std::uint32_t u : touched_units_) touched_[u] = 0;
  topk_.winners(0, winners);
}

template class SparseRowHasher<float>;
template class SparseRowHasher<std::int32_t>;

}  // namespace flynn::kernels
