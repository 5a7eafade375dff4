// The building blocks of the federated studies: the Guyon-style mixture (synthetic.hpp), the sparse scorer
// the privacy study evaluates releases with (held to FlyNN::predict, including saturated
// counts where 1 − γ^c would round to 1), a privacy trial's shape and its limit (huge ε and
// T = m·L gives back the non-private model), and a scaling run's invariants.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "flynn/classifier.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/harness/privacy_study.hpp"
#include "flynn/harness/synthetic.hpp"
#include "flynn/harness/scaling_study.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/random.hpp"
#include "test_support.hpp"

namespace flynn::harness {
using namespace flynn::federated;
namespace {

TEST(Mixture, DeterministicShapedAndLabelled) {
  MixtureSpec spec;
  spec.rows = 3000;
  const Dataset a = gaussian_mixture(spec, 11), b = gaussian_mixture(spec, 11), c = gaussian_mixture(spec, 12);
  EXPECT_EQ(a.features, b.features);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_NE(a.features, c.features);
  EXPECT_EQ(a.n_rows, 3000u);
  EXPECT_EQ(a.n_features, 30u);
  EXPECT_EQ(a.classes, LabelSet({"0", "1"}));
  const auto sizes = a.class_sizes();
  // 5 clusters per class, dealt evenly; 1% of labels flipped at random.
  EXPECT_NEAR(static_cast<double>(sizes[0]) / 3000, 0.5, 0.02);
  for (float v : a.features) ASSERT_TRUE(std::isfinite(v));
  EXPECT_THROW(gaussian_mixture(MixtureSpec{10, 30, 1, 5}, 1), Error);
}

// Counts with many large values (γ^c far below 2^-53) and a few small ones.
ClassCounts saturated_counts(std::size_t L, std::uint32_t m, std::uint64_t seed) {
  SeededRng rng(seed);
  ClassCounts c(L, m);
  for (auto& v : c.values())
    v = rng.uniform_below(5) == 0 ? static_cast<std::uint32_t>(rng.uniform_below(6))
                                  : static_cast<std::uint32_t>(300 + rng.uniform_below(9000));
  return c;
}

TEST(SparseScorer, AgreesWithFlyNNPredict) {
  const Dataset test = test::blobs(3, 200, 10, 5);
  FlyConfig config;
  config.input_dim = 10;
  config.m = 400;
  config.s = 3;
  config.rho = 20;
  config.seed = 3;
  for (double gamma : {0.0, 0.5, 0.9}) {
    config.gamma = gamma;
    for (std::uint64_t seed : {1, 2, 3}) {
      const ClassCounts counts = saturated_counts(3, config.m, seed);
      const FlyNN model(config, test.classes, counts, 1);
      const auto expected = model.predict(test);
      const auto winners = model.hasher().hash(test.features.data(), test.n_rows, 1);
      const SparseScorer scorer(winners, test.n_rows, config.rho, config.m, 3);
      const auto got = scorer.predict(SparseScorer::nonzero(counts.values()), gamma);
      std::size_t agree = 0;
      for (std::size_t r = 0; r < got.size(); ++r) agree += got[r] == expected[r];
      if (gamma == 0.0) {
        EXPECT_EQ(agree, got.size());  // integer scores: identical
      } else {
        EXPECT_GE(agree, got.size() - 2) << "gamma " << gamma;  // only rounding-level ties
      }
    }
  }
}

TEST(PrivacyTrial, GridShapeAndTheNonPrivateLimit) {
  MixtureSpec spec;
  spec.rows = 3000;
  const Dataset all = gaussian_mixture(spec, 5);
  std::vector<std::size_t> tr(2500), te(500);
  std::iota(tr.begin(), tr.end(), 0);
  std::iota(te.begin(), te.end(), 2500);
  const Dataset train = all.subset(tr), test = all.subset(te);
  PrivacyTrialSpec t;
  t.config.input_dim = 30;
  t.config.m = 100;
  t.config.s = 3;
  t.config.rho = 10;
  t.config.gamma = 0.9;
  t.config.seed = 8;
  t.parties = 2;
  t.epsilons = {0.5, 1e5};
  t.Ts = {4, 200, 201};  // 201 > m·L = 200: skipped
  const auto points = privacy_trial(train, test, t);
  ASSERT_EQ(points.size(), 1u + 2 * 2);
  EXPECT_EQ(points[0].T, 0u);
  EXPECT_EQ(points[0].bytes_sent_per_party, 100u * 2 * 4);
  EXPECT_GT(points[0].balanced_accuracy, 0.55);
  for (std::size_t i = 1; i < points.size(); ++i) {
    EXPECT_GE(points[i].balanced_accuracy, 0.0);
    EXPECT_LE(points[i].balanced_accuracy, 1.0);
    EXPECT_EQ(points[i].bytes_sent_per_party, 4 + 8u * points[i].T);
  }
  // ε = 10^5 with every entry released: noise scale 2·200·2/10^5 < 0.01, so the release is
  // the exact counts and the accuracy that of the non-private model.
  EXPECT_EQ(points.back().T, 200u);
  EXPECT_NEAR(points.back().balanced_accuracy, points[0].balanced_accuracy, 0.005);
}

TEST(ScalingRun, ModelDoesNotDependOnParties) {
  const Dataset data = test::blobs(3, 60, 8, 21);
  HyperParams h;
  h.m = 300;
  h.rho = 10;
  h.seed = 4;
  std::uint32_t crc = 0;
  for (int tau : {1, 2, 5}) {
    const ScalingRun r = scaling_run(data, h, data.classes, tau, 0, 99);
    EXPECT_EQ(r.parties, tau);
    EXPECT_GT(r.training_seconds, 0.0);
    EXPECT_GE(r.training_seconds, r.local_max);
    EXPECT_EQ(r.aggregate_traffic.bytes_sent, 300u * 3 * 4);
    if (tau == 1) crc = r.model_crc32;
    EXPECT_EQ(r.model_crc32, crc) << tau;
  }
}

TEST(StudyIo, CsvAndStatistics) {
  const MeanSd m = mean_sd({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(m.mean, 2.5);
  EXPECT_NEAR(m.sd, 1.2909944487, 1e-9);
  EXPECT_EQ(mean_sd({5}).sd, 0.0);
  EXPECT_GE(usable_cores(), 1);
  EXPECT_NE(machine_description().find("core"), std::string::npos);
  EXPECT_THROW(harness::load_fashion_mnist("/nonexistent-dir", false), Error);
}

}  // namespace
}  // namespace flynn::harness
