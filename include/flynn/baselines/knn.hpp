#pragma once
// Exact k-nearest-neighbour classification (the paper's kNNC / 1NNC baselines) on FAISS's
// brute-force IndexFlatL2: Euclidean distance on L2-normalised rows (the paper's protocol),
// or on standardised features (what a user would run: scikit-learn's StandardScaler, then
// KNeighborsClassifier).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "flynn/dataset.hpp"

namespace flynn::baselines {

/// Neighbour lists of a batch of queries: for query q, ids[q·k + j] is its j-th nearest
/// training row (ascending distance).
struct Neighbours {
  std::uint32_t k = 0;
  std::vector<std::int64_t> ids;  ///< −1 where fewer than k rows exist
  std::vector<float> distances;  ///< squared L2 distances, same layout
};

/// How rows are scaled before distances are taken.
enum class KnnScaling {
  L2Normalize,  ///< each row to unit L2 norm (zero rows stay zero): the paper's kNNC
  Standardize,  ///< each feature z-scored with the TRAINING rows' mean and population sd
                ///< (a feature constant in training gets sd 1, as StandardScaler does)
};
/// "l2", "standardized".
// Inline: it needs no FAISS, and the CLI names scalings in builds without it.
inline const char* knn_scaling_name(KnnScaling s) { return s == KnnScaling::Standardize ? "standardized" : "l2"; }

/// A FAISS exact index over a training set's scaled rows.
class ExactKnnIndex {
 public:
  /// Copies and scales `train`'s rows into the index (Standardize: statistics from these
  /// rows, applied to every query too). `threads` bounds FAISS's OpenMP threads during
  /// searches (0 = all cores).
  ExactKnnIndex(const Dataset& train, int threads = 0, KnnScaling scaling = KnnScaling::L2Normalize);
  ~ExactKnnIndex();
  ExactKnnIndex(const ExactKnnIndex&) = delete;
  ExactKnnIndex& operator=(const ExactKnnIndex&) = delete;

  std::size_t size() const { return n_rows_; }

  /// The k nearest training rows of every row of `queries` (k is capped at size()).
  Neighbours search(const Dataset& queries, std::uint32_t k) const;
  /// The same for rows given directly (row-major, raw features: they are scaled as the
  /// training rows were).
  Neighbours search(const float* rows, std::size_t n, std::uint32_t k) const;

  KnnScaling scaling() const { return scaling_; }

 private:
  // Writes the scaled copy of n raw rows.
  void scale_rows(const float* in, std::size_t n, float* out) const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::size_t n_rows_ = 0;
  std::size_t dim_ = 0;
  int threads_ = 0;
  KnnScaling scaling_ = KnnScaling::L2Normalize;
  std::vector<double> mean_, inv_sd_;  // Standardize: per-feature training statistics
};

/// Majority vote among each query's first k neighbours (k ≤ neighbours.k). Tie rule:
/// among the classes with the most votes, the one whose member appears first in the
/// neighbour list (i.e. the nearest) wins.
std::vector<std::uint32_t> knn_vote(const Neighbours& neighbours, std::uint32_t k,
                                    const std::vector<std::uint32_t>& train_labels,
                                    std::size_t n_classes);

/// Fraction of each query's first k neighbours in each class (n × L row-major, rows sum to 1):
/// kNN's own class-probability estimate, the comparator of FlyNN's calibrated probabilities.
/// Missing neighbours (id −1) are skipped; a query with none gets uniform fractions.
std::vector<double> knn_vote_fractions(const Neighbours& neighbours, std::uint32_t k,
                                       const std::vector<std::uint32_t>& train_labels,
                                       std::size_t n_classes);

/// Writes the L2-normalised copy of n × d rows (zero rows stay zero).
void l2_normalize_rows(const float* in, std::size_t n, std::size_t d, float* out);

/// What FAISS computes with: the BLAS library (from /proc/self/maps) and OpenBLAS's core
/// type when it is OpenBLAS, e.g. "libopenblas.so.0 (Haswell)".
std::string blas_description();

}  // namespace flynn::baselines
