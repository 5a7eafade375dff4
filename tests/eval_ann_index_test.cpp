// The nearest-neighbour peers of `flynn bench --peers` (ann_index.hpp): FAISS's exact index
// agrees with ExactKnnIndex, and the approximate ones (IVF, HNSW, hnswlib) searched broadly
// enough find the exact neighbours of small data.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "flynn/baselines/ann_index.hpp"
#include "flynn/baselines/knn.hpp"
#include "flynn/error.hpp"
#include "test_support.hpp"

namespace flynn::baselines {
namespace {

struct Rows {
  Dataset train, test;
  std::vector<float> train_rows, test_rows;
};

Rows normalised_blobs() {
  Rows r;
  r.train = test::blobs(3, 150, 16, 11);
  r.test = test::blobs(3, 20, 16, 11);  // the same centres, other draws
  r.train_rows.resize(r.train.features.size());
  r.test_rows.resize(r.test.features.size());
  l2_normalize_rows(r.train.features.data(), r.train.n_rows, 16, r.train_rows.data());
  l2_normalize_rows(r.test.features.data(), r.test.n_rows, 16, r.test_rows.data());
  return r;
}

// The share of the exact 5 nearest neighbours that `nb` found.
double recall(const Neighbours& exact, const Neighbours& nb) {
  std::size_t hit = 0;
  const std::size_t n = exact.ids.size() / exact.k;
  for (std::size_t q = 0; q < n; ++q)
    for (std::uint32_t i = 0; i < exact.k; ++i)
      for (std::uint32_t j = 0; j < nb.k; ++j) hit += exact.ids[q * exact.k + i] == nb.ids[q * nb.k + j];
  return static_cast<double>(hit) / static_cast<double>(exact.ids.size());
}

TEST(AnnIndex, FaissIndexesAndHnswlibFindTheExactNeighbours) {
  const Rows r = normalised_blobs();
  const ExactKnnIndex reference(r.train, 1);
  const Neighbours exact = reference.search(r.test, 5);

  // Each index (made fresh for each build) and a breadth at which it searches exhaustively.
  struct Case {
    std::function<std::unique_ptr<AnnIndex>()> make;
    std::uint32_t breadth;
    std::string breadth_name;
  };
  std::vector<Case> cases = {
      {[] { return make_faiss_index("Flat"); }, 0, ""},
      {[] { return make_faiss_index("IVF8,Flat"); }, 8, "nprobe"},  // every list probed
      {[] { return make_faiss_index("HNSW16"); }, 200, "efSearch"},
  };
  if (have_hnswlib()) cases.push_back({[] { return make_hnswlib_index(16, 100); }, 200, "ef"});
  for (const Case& c : cases) {
    for (const int threads : {1, 2}) {
      const std::unique_ptr<AnnIndex> index = c.make();
      EXPECT_EQ(index->breadth_name(), c.breadth_name) << index->name();
      index->build(r.train_rows.data(), r.train.n_rows, 16, threads);
      index->set_breadth(c.breadth);
      const Neighbours nb = index->search(r.test_rows.data(), r.test.n_rows, 5, threads);
      ASSERT_EQ(nb.k, 5u) << index->name();
      EXPECT_GE(recall(exact, nb), 0.98) << index->name() << " on " << threads << " threads";
      // Nearest first, as knn_vote's tie rule expects.
      for (std::size_t q = 0; q < r.test.n_rows; ++q)
        for (std::uint32_t j = 1; j < nb.k; ++j)
          EXPECT_LE(nb.distances[q * 5 + j - 1], nb.distances[q * 5 + j] + 1e-6f) << index->name();
      EXPECT_GT(index->size_bytes(), r.train_rows.size() * sizeof(float)) << index->name();
    }
  }
}

TEST(AnnIndex, BadFactoryStringsAndSearchesBeforeBuildingAreErrors) {
  const Rows r = normalised_blobs();
  auto bad = make_faiss_index("NoSuchIndex");
  EXPECT_THROW(bad->build(r.train_rows.data(), r.train.n_rows, 16, 1), Error);
  EXPECT_THROW(make_faiss_index("Flat")->search(r.test_rows.data(), 1, 5, 1), Error);
  EXPECT_THROW(make_faiss_index(""), Error);
  if (have_hnswlib()) {
    EXPECT_THROW(make_hnswlib_index(16, 100)->search(r.test_rows.data(), 1, 5, 1), Error);
    EXPECT_THROW(make_hnswlib_index(1, 100), Error);
  } else {
    EXPECT_THROW(make_hnswlib_index(16, 100), Error);
  }
}

}  // namespace
}  // namespace flynn::baselines
