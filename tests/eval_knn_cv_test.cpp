// kNN cross-validation: the one-search-per-fold k sweep equals a brute-force kNN with the
// same tie rule for every k of the grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "flynn/error.hpp"
#include "flynn/baselines/knn_cv.hpp"
#include "test_support.hpp"

namespace flynn::baselines {
namespace {

// Brute force: squared distances between L2-normalised rows (double), nearest first,
// majority vote, ties to the class whose member is nearest.
std::vector<std::uint32_t> brute_knn(const Dataset& train, const Dataset& test, std::uint32_t k) {
  auto unit = [](const float* x, std::size_t d) {
    double ss = 0;
    for (std::size_t j = 0; j < d; ++j) ss += double(x[j]) * x[j];
    std::vector<double> u(d);
    for (std::size_t j = 0; j < d; ++j) u[j] = ss > 0 ? x[j] / std::sqrt(ss) : 0.0;
    return u;
  };
  const std::size_t d = train.n_features, L = train.classes.size();
  std::vector<std::uint32_t> out;
  for (std::size_t q = 0; q < test.n_rows; ++q) {
    const auto uq = unit(test.row(q), d);
    std::vector<std::pair<double, std::size_t>> dist;
    for (std::size_t r = 0; r < train.n_rows; ++r) {
      const auto ur = unit(train.row(r), d);
      double s = 0;
      for (std::size_t j = 0; j < d; ++j) s += (uq[j] - ur[j]) * (uq[j] - ur[j]);
      dist.emplace_back(s, r);
    }
    std::sort(dist.begin(), dist.end());
    const std::uint32_t kk = std::min<std::uint32_t>(k, static_cast<std::uint32_t>(dist.size()));
    std::vector<std::uint32_t> votes(L, 0);
    for (std::uint32_t j = 0; j < kk; ++j) ++votes[train.labels[dist[j].second]];
    const std::uint32_t top = *std::max_element(votes.begin(), votes.end());
    for (std::uint32_t j = 0; j < kk; ++j)
      if (votes[train.labels[dist[j].second]] == top) {
        out.push_back(train.labels[dist[j].second]);
        break;
      }
  }
  return out;
}

TEST(EvalKnnCv, SweepMatchesBruteForce) {
  // Overlapping blobs so that different k give different answers.
  const Dataset data = test::blobs(3, 40, 6, 11, 1.2);
  const std::uint32_t k_folds = 4;
  const auto folds = eval::stratified_folds(data.labels, data.classes.size(), k_folds, 3);
  const std::vector<std::uint32_t> grid = {1, 2, 4, 8, 16, 32, 64};
  const KnnCvResult r = cross_validate_knn(data, folds, k_folds, grid, 1);
  ASSERT_EQ(r.k_values, grid);
  const auto parts = eval::fold_rows(folds, k_folds);
  bool differ = false;
  for (std::size_t g = 0; g < grid.size(); ++g) {
    for (std::uint32_t f = 0; f < k_folds; ++f) {
      const Dataset train = data.subset(parts[f].train), test = data.subset(parts[f].test);
      const auto pred = brute_knn(train, test, grid[g]);
      std::size_t correct = 0;
      for (std::size_t i = 0; i < pred.size(); ++i) correct += pred[i] == test.labels[i];
      EXPECT_DOUBLE_EQ(r.per_k[g].fold_accuracy[f], double(correct) / pred.size())
          << "k=" << grid[g] << " fold " << f;
    }
    differ = differ || r.per_k[g].mean != r.per_k[0].mean;
  }
  EXPECT_TRUE(differ) << "the data should make k matter";
  for (std::size_t g = 0; g < grid.size(); ++g) EXPECT_LE(r.per_k[g].mean, r.per_k[r.best].mean);
}

TEST(EvalKnnCv, RejectsBadInput) {
  const Dataset data = test::blobs(2, 10, 3, 1);
  const auto folds = eval::stratified_folds(data.labels, 2, 2, 0);
  EXPECT_THROW(cross_validate_knn(data, folds, 2, {0, 1}), Error);
  EXPECT_THROW(cross_validate_knn(data, folds, 2, {}), Error);
  EXPECT_THROW(cross_validate_knn(data, {0, 1}, 2), Error);
}

TEST(Tune, KnnOnStandardisedFeaturesIgnoresFeatureScales) {
  // Two classes on one ray, told apart only by their distance from the origin: rows
  // (u, u + ε) with u ∈ [1, 2) for class a and [3, 4) for class b. L2 normalisation maps every
  // row to nearly (1, 1)/√2, erasing the class; standardised features keep it.
  std::vector<std::vector<float>> rows;
  std::vector<std::string> labels;
  for (int i = 0; i < 60; ++i) {
    const float u = 1.0f + static_cast<float>((i * 37) % 60) / 60.0f;
    const float eps = 0.01f * static_cast<float>((i * 13) % 7);
    rows.push_back({u, u + eps});
    labels.push_back("a");
    rows.push_back({u + 2.0f, u + 2.0f + eps});
    labels.push_back("b");
  }
  const Dataset data = test::make_dataset(rows, labels);
  const auto folds = eval::stratified_folds(data.labels, 2, 5, 0);
  const TunedKnnCvResult k = cross_validate_tuned_knn(data, folds, 5, {1, 4}, 1);
  const double l2 = k.l2.per_k[k.l2.best].mean, z = k.standardized.per_k[k.standardized.best].mean;
  EXPECT_GT(z, 0.95);
  EXPECT_GT(z, l2 + 0.2);
  EXPECT_EQ(k.best().scaling, KnnScaling::Standardize);
  // Rescaling a feature leaves standardised kNN unchanged.
  Dataset scaled = data;
  for (std::size_t r = 0; r < data.n_rows; ++r) scaled.features[r * 2] *= 64.0f;
  const KnnCvResult z2 = cross_validate_knn(scaled, folds, 5, {1, 4}, 1, KnnScaling::Standardize);
  EXPECT_EQ(z2.per_k[z2.best].fold_accuracy, k.standardized.per_k[k.standardized.best].fold_accuracy);
  // Vote fractions: rows sum to 1, and their argmax accuracy matches the best k's CV accuracy
  // up to vote ties (checked loosely).
  const auto& v = k.standardized.best_vote_fractions;
  ASSERT_EQ(v.size(), data.n_rows * 2);
  for (std::size_t r = 0; r < data.n_rows; ++r) EXPECT_NEAR(v[2 * r] + v[2 * r + 1], 1.0, 1e-12);
}

}  // namespace
}  // namespace flynn::baselines
