#pragma once
// Nearest-neighbour indexes beside FAISS's exact one: the peers `flynn bench --peers`
// measures FlyNN against, FAISS IVF and HNSW (any FAISS factory string) and hnswlib. Each
// indexes rows that are already L2-normalised (the kNN baseline's protocol, knn.hpp:
// l2_normalize_rows) and answers k-neighbour queries that knn_vote turns into classes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "flynn/baselines/knn.hpp"

namespace flynn::baselines {

/// An index of L2-normalised rows answering k-nearest-neighbour queries (squared L2).
class AnnIndex {
 public:
  virtual ~AnnIndex() = default;

  /// The index and its build parameters, e.g. "FAISS IVF1024,Flat", "hnswlib M=16 efC=200".
  virtual std::string name() const = 0;
  /// The search parameter set_breadth sets ("nprobe", "efSearch", "ef"); "" when the
  /// index has none (exact search).
  virtual std::string breadth_name() const = 0;

  /// Builds the index over n × d row-major rows (trains it where it needs training: IVF's
  /// k-means), on `threads` threads (0 = all cores). Called once, before any search.
  virtual void build(const float* rows, std::size_t n, std::size_t d, int threads) = 0;
  /// Sets the search breadth: IVF's lists probed, HNSW's candidate list (at least k is
  /// used). Ignored by an index without one.
  virtual void set_breadth(std::uint32_t breadth) = 0;
  /// The k nearest indexed rows (ids in build order, nearest first) of each of n queries
  /// (row-major, d columns, normalised like the indexed rows), on `threads` threads.
  virtual Neighbours search(const float* queries, std::size_t n, std::uint32_t k, int threads) const = 0;
  /// Bytes of the index as its library writes it to a file.
  virtual std::uint64_t size_bytes() const = 0;
};

/// A FAISS index of squared L2 distance from its factory string: "Flat" (exact),
/// "IVF1024,Flat" (k-means into 1024 lists, breadth = nprobe), "HNSW32" (breadth =
/// efSearch). Throws flynn::Error on an empty string; build() throws one naming the string
/// when FAISS does not know it.
std::unique_ptr<AnnIndex> make_faiss_index(const std::string& factory);

/// Whether this build has hnswlib (Debian libhnswlib-dev, header-only).
bool have_hnswlib();

/// An hnswlib HNSW graph of squared L2 distance (distances by flynn's SIMD-dispatched
/// kernel, as fast as FAISS's on the same CPU), M links per node, `ef_construction`
/// candidates while building (breadth = ef). Its build is parallel over rows, so a graph
/// built on several threads may differ from a one-thread one. Throws flynn::Error in a
/// build without hnswlib.
std::unique_ptr<AnnIndex> make_hnswlib_index(std::uint32_t m_links, std::uint32_t ef_construction);

}  // namespace flynn::baselines
