#pragma once
// FlyHash of sparse rows through inverted lists (input column → units that read it):
// work proportional to the non-zeros instead of m·s. Produces exactly the dense kernels'
// winners: each unit receives its non-zero addends in ascending column order (skipping
// zeros does not change a float sum that starts from +0), untouched units have activation
// exactly 0, and ties are broken by the same rotation through the same TopK.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/topk.hpp"
#include "flynn/lifting_matrix.hpp"

namespace flynn::kernels {

/// The transpose of the lifting matrix as CSR: for column f, the units that read it.
class ColumnUnits {
 public:
  explicit ColumnUnits(const LiftingMatrix& M);
  const std::uint32_t* begin(std::uint32_t column) const { return units_.data() + start_[column]; }
  const std::uint32_t* end(std::uint32_t column) const { return units_.data() + start_[column + 1]; }

 private:
  std::vector<std::uint64_t> start_;
  std::vector<std::uint32_t> units_;
};

/// The inverted lists of one FlyHasher, built once, on the first sparse row.
struct SparseLists {
  std::once_flag once;
  std::unique_ptr<ColumnUnits> lists;
  const ColumnUnits& get(const LiftingMatrix& M) {
    std::call_once(once, [&] { lists = std::make_unique<ColumnUnits>(M); });
    return *lists;
  }
};

/// Per-worker scratch for sparse rows with activations of type T (float or int32).
template <typename T>
class SparseRowHasher {
 public:
  /// Hashes one row given as ascending non-zero columns and their (preprocessed) values;
  /// `offset` is the row's tie rotation. Writes ρ ascending winners.
  void hash(const ColumnUnits& lists, std::uint32_t m, std::uint32_t rho,
            const std::uint32_t* columns, const T* values, std::size_t nnz, std::uint32_t offset,
            std::uint32_t* winners);

 private:
  std::vector<T> activation_;
  TopK<T> topk_;
};

extern template class SparseRowHasher<float>;
extern template class SparseRowHasher<std::int32_t>;

}  // namespace flynn::kernels
