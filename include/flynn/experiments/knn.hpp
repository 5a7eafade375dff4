#pragma once
// Exact k-nearest-neighbour classification (the paper's kNNC / 1NNC baselines) on FAISS's
// brute-force IndexFlatL2, Euclidean distance on L2-normalised rows.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "flynn/dataset.hpp"

namespace flynn::experiments {

/// Neighbour lists of a batch of queries: for query q, ids[q·k + j] is its j-th nearest
/// training row (ascending distance).
struct Neighbours {
  std::uint32_t k = 0;
  std::vector<std::int64_t> ids;  ///< −1 where fewer than k rows exist
  std::vector<float> distances;  ///< squared L2 distances, same layout
};

/// A FAISS exact index over a training set's L2-normalised rows.
class ExactKnnIndex {
 public:
  /// Copies and normalises `train`'s rows into the index. `threads` bounds FAISS's
  /// OpenMP threads during searches (0 = all cores).
  ExactKnnIndex(const Dataset& train, int threads = 0);
  ~ExactKnnIndex();
  ExactKnnIndex(const ExactKnnIndex&) = delete;
  ExactKnnIndex& operator=(const ExactKnnIndex&) = delete;

  std::size_t size() const { return n_rows_; }

  /// The k nearest training rows of every row of `queries` (k is capped at size()).
  Neighbours search(const Dataset& queries, std::uint32_t k) const;
  /// The same for rows given directly (row-major, already any scale: they are normalised).
  Neighbours search(const float* rows, std::size_t n, std::uint32_t k) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::size_t n_rows_ = 0;
  std::size_t dim_ = 0;
  int threads_ = 0;
};

/// Majority vote among each query's first k neighbours (k ≤ neighbours.k). Tie rule:
/// among the classes with the most votes, the one whose member appears first in the
/// neighbour list (i.e. the nearest) wins.
std::vector<std::uint32_t> knn_vote(const Neighbours& neighbours, std::uint32_t k,
                                    const std::vector<std::uint32_t>& train_labels,
                                    std::size_t n_classes);

/// Writes the L2-normalised copy of n × d rows (zero rows stay zero).
void l2_normalize_rows(const float* in, std::size_t n, std::size_t d, float* out);

/// What FAISS computes with: the BLAS library (from /proc/self/maps) and OpenBLAS's core
/// type when it is OpenBLAS, e.g. "libopenblas.so.0 (Haswell)".
std::string blas_description();

}  // namespace flynn::experiments
