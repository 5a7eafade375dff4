// Synthetic data: Guyon's generator (make_classification) structure — cluster sizes,
// hypercube centroids, per-cluster labels, label noise, shuffling — determinism, and the
// binary variant's exactly-b-ones rows.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "flynn/error.hpp"
#include "flynn/harness/synthetic.hpp"
#include "flynn/harness/synthetic_study.hpp"

namespace flynn::harness {
namespace {

TEST(EvalSynthetic, ClusterSizesCentroidsAndLabelsFollowGuyon) {
  ClassificationSpec s;
  s.n_samples = 6003;  // 6 clusters: 1001, 1001, 1001, 1000, 1000, 1000
  s.n_features = 4;
  s.n_classes = 3;
  s.n_clusters_per_class = 2;
  s.class_sep = 2.0;
  s.flip_y = 0.0;
  s.shuffle = false;  // rows stay grouped by cluster
  const Dataset d = make_classification(s, 7, 0);
  ASSERT_EQ(d.n_rows, 6003u);
  ASSERT_EQ(d.n_features, 4u);
  ASSERT_EQ(d.classes.size(), 3u);
  EXPECT_EQ(d.classes.name(2), "2");
  const std::size_t sizes[6] = {1001, 1001, 1001, 1000, 1000, 1000};
  std::size_t start = 0;
  std::set<std::vector<int>> vertices;
  for (std::size_t k = 0; k < 6; ++k) {
    std::vector<double> mean(4, 0.0);
    for (std::size_t r = start; r < start + sizes[k]; ++r) {
      EXPECT_EQ(d.labels[r], k % 3) << "cluster " << k << " row " << r;
      for (std::size_t j = 0; j < 4; ++j) mean[j] += d.row(r)[j];
    }
    // z·A has mean 0, so the cluster mean estimates its centroid, a vertex of {±2}^4;
    // the standard error of a coordinate is below sqrt(4/3)/sqrt(1000) ≈ 0.04.
    std::vector<int> signs;
    for (double& m : mean) {
      m /= sizes[k];
      EXPECT_NEAR(std::fabs(m), 2.0, 0.25) << "cluster " << k;
      signs.push_back(m > 0 ? 1 : -1);
    }
    vertices.insert(signs);
    start += sizes[k];
  }
  EXPECT_EQ(vertices.size(), 6u) << "centroids must be distinct vertices";
}

TEST(EvalSynthetic, DeterministicShuffledAndNoisy) {
  ClassificationSpec s;
  s.n_samples = 2000;
  s.n_features = 10;
  s.n_classes = 5;
  s.n_clusters_per_class = 3;
  s.class_sep = 1.2;
  const Dataset a = make_classification(s, 1, 4), b = make_classification(s, 1, 4);
  EXPECT_EQ(a.features, b.features);
  EXPECT_EQ(a.labels, b.labels);
  const Dataset c = make_classification(s, 1, 5), e = make_classification(s, 2, 4);
  EXPECT_NE(a.features, c.features);
  EXPECT_NE(a.features, e.features);
  // Balanced classes (3 clusters of 133 or 134 rows each) up to the 1% label noise.
  std::map<std::uint32_t, std::size_t> count;
  for (auto l : a.labels) ++count[l];
  ASSERT_EQ(count.size(), 5u);
  for (const auto& [l, n] : count) EXPECT_NEAR(static_cast<double>(n), 400.0, 30.0) << l;
  // Shuffled: the first 100 rows are not all from one class.
  std::set<std::uint32_t> first(a.labels.begin(), a.labels.begin() + 100);
  EXPECT_GT(first.size(), 3u);
  // Label noise re-draws about flip_y of the labels: without shuffling, rows of cluster k
  // should be labelled k mod L; count the exceptions.
  s.shuffle = false;
  s.flip_y = 0.2;
  const Dataset noisy = make_classification(s, 1, 4);
  std::size_t changed = 0, start = 0;
  for (std::size_t k = 0; k < 15; ++k) {
    const std::size_t size = 2000 / 15 + (k < 2000 % 15);
    for (std::size_t r = start; r < start + size; ++r) changed += noisy.labels[r] != k % 5;
    start += size;
  }
  // Expected 2000 · 0.2 · 4/5 = 320 changed labels.
  EXPECT_NEAR(static_cast<double>(changed), 320.0, 60.0);
}

TEST(EvalSynthetic, RejectsImpossibleSpecs) {
  ClassificationSpec s;
  s.n_features = 3;  // 8 vertices
  s.n_classes = 5;
  s.n_clusters_per_class = 2;  // 10 clusters
  EXPECT_THROW(make_classification(s, 0, 0), Error);
  s.n_features = 4;
  EXPECT_NO_THROW(make_classification(s, 0, 0));
  s.n_samples = 0;
  EXPECT_THROW(make_classification(s, 0, 0), Error);
}

TEST(EvalSynthetic, BinaryRowsHaveExactlyBOnes) {
  BinarySpec s;
  s.n_samples = 500;
  s.n_features = 50;
  s.ones_per_row = 5;
  const Dataset d = make_binary_classification(s, 3, 1);
  ASSERT_EQ(d.n_features, 50u);
  ASSERT_EQ(d.n_rows, 500u);
  EXPECT_EQ(d.classes.size(), 5u);
  std::set<std::vector<float>> distinct;
  for (std::size_t r = 0; r < d.n_rows; ++r) {
    std::size_t ones = 0;
    for (std::size_t j = 0; j < 50; ++j) {
      const float v = d.row(r)[j];
      ASSERT_TRUE(v == 0.0f || v == 1.0f);
      ones += v == 1.0f;
    }
    EXPECT_EQ(ones, 5u) << "row " << r;
    distinct.emplace(d.row(r), d.row(r) + 50);
  }
  EXPECT_GT(distinct.size(), 50u);  // a code, not a constant
  EXPECT_EQ(make_binary_classification(s, 3, 1).features, d.features);
  s.ones_per_row = 50;
  EXPECT_THROW(make_binary_classification(s, 3, 1), Error);
  s.ones_per_row = 5;
  s.n_features = 15;  // latent dimension 1
  EXPECT_THROW(make_binary_classification(s, 3, 1), Error);
}

TEST(EvalSynthetic, StudyConfigurationsAndIds) {
  const auto configs = paper_synthetic_configs();
  ASSERT_EQ(configs.size(), 8u);
  EXPECT_EQ(configs[0].key(), "dense-d50-n1000");
  EXPECT_EQ(configs[7].key(), "binary-d100-n10000-b10");
  EXPECT_EQ(synthetic_dataset_id(configs[1], 7), "dense-d50-n10000-r07");
  SyntheticConfig small = configs[4];
  small.n = 200;
  const Dataset d = make_synthetic(small, 4, 0, 0);
  EXPECT_EQ(d.n_rows, 200u);
  EXPECT_EQ(d.source, "binary-d50-n200-b5-r00");
}

}  // namespace
}  // namespace flynn::harness
