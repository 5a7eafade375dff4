// Method variants in a federation: byte-identical parity with central training over random
// splits (the standardising variants' statistics come from one exact all-reduce), DP with
// the variants that need no training statistics, and a clear refusal for those that do.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "flynn/classifier.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/random.hpp"
#include "test_support.hpp"

namespace flynn::federated {
namespace {

HyperParams variant_hyper(const std::string& variant, std::uint64_t seed) {
  HyperParams h;
  h.m = 256;
  h.s = 3;
  h.rho = 12;
  h.gamma = 0.6;
  h.seed = seed;
  h.variant = parse_variant(variant);
  return h;
}

Dataset offset_blobs(std::uint64_t seed) {
  Dataset data = test::blobs(4, 30, 6, seed);
  for (std::size_t r = 0; r < data.n_rows; ++r) {
    data.features[r * 6] = data.features[r * 6] * 250.0f - 3000.0f;
    data.features[r * 6 + 2] *= 0.003f;
  }
  return data;
}

// The colony of `data` split among `tau` parties as `how` says ("iid", "by-class",
// "dirichlet:0.3"), from the split seed `seed`.
ColonyOutcome federate_split(const Dataset& data, const FederationSettings& settings, int tau, const char* how,
                             std::uint64_t seed) {
  const auto split = split_rows(data.labels, data.classes.size(), tau, SplitSpec::parse(how), seed);
  std::vector<Dataset> shards;
  for (const auto& rows : split) shards.push_back(data.subset(rows));
  std::vector<const Dataset*> ptrs;
  for (const Dataset& shard : shards) ptrs.push_back(&shard);
  return run_colony(ptrs, settings);
}

TEST(VariantsFederated, ByteIdenticalToCentralOverRandomSplits) {
  const Dataset data = offset_blobs(21);
  SeededRng rng(77);
  for (const char* variant : {"sign", "z", "zsign", "zsign-q", "thermo", "thermo-sign", "zsign-q+paper",
                              "zsign+paper", "anchor", "anchor+paper"}) {
    for (int trial = 0; trial < 3; ++trial) {
      const int tau = 2 + static_cast<int>(rng.uniform_below(5));
      const char* how = trial == 0 ? "iid" : trial == 1 ? "by-class" : "dirichlet:0.3";
      const std::uint64_t split_seed = rng.next_u64();
      FederationSettings settings;
      settings.hyper = variant_hyper(variant, rng.next_u64());
      settings.labels = data.classes;
      settings.threads = 1;
      const ColonyOutcome fed = federate_split(data, settings, tau, how, split_seed);
      FlyNN central(settings.hyper.resolve(6, data.classes.size()), data.classes, 2);
      central.fit(data);
      central.set_missing_policy(MissingPolicy::Mean);  // what the federation (and flynn train) records
      ASSERT_EQ(fed.model.feature_stats(), central.feature_stats()) << variant << " " << trial;
      ASSERT_EQ(fed.model_file, io::serialize_model(central)) << variant << " " << trial;
    }
  }
}

// The low-dimensional defaults with nothing given (anchor units, s = max(8, 2d), m, ρ and γ
// from their rules) federate byte for byte: every party resolves them from the agreed
// width, and the standardisation comes from the pooled statistics.
TEST(VariantsFederated, LowDimensionalDefaultsAreByteIdenticalToCentral) {
  for (const std::uint32_t d : {5u, 8u, 12u}) {
    const Dataset data = test::blobs(3, 30, d, 40 + d);
    FederationSettings settings;
    settings.hyper.seed = 1000 + d;  // everything else from the default rules
    settings.labels = data.classes;
    settings.threads = 1;
    const FlyConfig resolved = settings.hyper.resolve(d, data.classes.size());
    ASSERT_EQ(variant_name(resolved.variant), "anchor") << d;
    ASSERT_EQ(resolved.s, 2 * d) << d;
    SeededRng rng(d);
    for (const char* how : {"iid", "by-class", "dirichlet:0.3"}) {
      const ColonyOutcome fed = federate_split(data, settings, 3, how, rng.next_u64());
      FlyNN central(resolved, data.classes, 2);
      central.fit(data);
      central.set_missing_policy(MissingPolicy::Mean);  // what the federation (and flynn train) records
      ASSERT_EQ(fed.model.config(), resolved) << d << " " << how;
      ASSERT_EQ(fed.model_file, io::serialize_model(central)) << d << " " << how;
    }
  }
}

// A value transform moves the statistics every party sums (the all-reduce of transformed
// values) and the rows every encoder reads: still byte for byte the central model.
TEST(VariantsFederated, ValueTransformsAreByteIdenticalToCentral) {
  Dataset data = offset_blobs(33);
  for (float& v : data.features) v = std::fabs(v) * 7.0f;  // skewed, non-negative
  SeededRng rng(91);
  for (const ValueTransform t : {ValueTransform::Sqrt, ValueTransform::Log1p}) {
    for (const char* variant : {"zsign-q", "zsign-q+paper", "anchor"}) {
      for (const char* how : {"iid", "by-class", "dirichlet:0.3"}) {
        const std::uint64_t split_seed = rng.next_u64();
        FederationSettings settings;
        settings.hyper = variant_hyper(variant, rng.next_u64());
        settings.hyper.value_transform = t;
        settings.labels = data.classes;
        settings.threads = 1;
        const ColonyOutcome fed = federate_split(data, settings, 3, how, split_seed);
        FlyNN central(settings.hyper.resolve(6, data.classes.size()), data.classes, 2);
        central.fit(data);
        central.set_missing_policy(MissingPolicy::Mean);  // what the federation (and flynn train) records
        ASSERT_EQ(fed.model.config().value_transform, t);
        ASSERT_EQ(fed.model.feature_stats(), central.feature_stats()) << variant << " " << how;
        ASSERT_EQ(fed.model_file, io::serialize_model(central)) << variant << " " << how;
      }
    }
  }
}

TEST(VariantsFederated, VariantIsPartOfTheAgreedConfig) {
  // Parties agree on FlyConfig fields (party.cpp's fingerprint lists the variant for
  // non-paper configs); configs that differ only in the variant are not equal.
  HyperParams h = variant_hyper("zsign", 5);
  const FlyConfig zsign = h.resolve(6, 4);
  h.variant = parse_variant("paper");
  EXPECT_EQ(zsign.first_difference(h.resolve(6, 4)), "variant");
}

TEST(VariantsFederated, DpWorksWithSignedLiftingAndRefusesStatistics) {
  const Dataset data = offset_blobs(23);
  const auto split = split_rows(data.labels, data.classes.size(), 3, SplitSpec::parse("iid"), 9);
  std::vector<Dataset> shards;
  for (const auto& rows : split) shards.push_back(data.subset(rows));
  std::vector<const Dataset*> ptrs;
  for (const Dataset& d : shards) ptrs.push_back(&d);
  FederationSettings settings;
  settings.labels = data.classes;
  settings.threads = 1;
  settings.hyper = variant_hyper("sign", 11);
  DpParams dp;
  dp.epsilon = 4.0;
  dp.T = 50;
  settings.dp = dp;
  const ColonyOutcome fed = run_colony(ptrs, settings);
  EXPECT_TRUE(fed.model.provenance().differentially_private);
  EXPECT_EQ(fed.model.config().variant, parse_variant("sign"));
  std::uint64_t released = 0;
  for (std::uint32_t v : fed.model.counts().values()) released += v != 0;
  EXPECT_GT(released, 0u);
  EXPECT_LE(released, 3u * dp.T);
  const io::ModelContents mc = io::parse_model(fed.model_file, "fed");
  EXPECT_EQ(mc.config.variant, parse_variant("sign"));

  settings.hyper = variant_hyper("zsign", 11);
  try {
    run_colony(ptrs, settings);
    FAIL() << "DP with training statistics was not refused";
  } catch (const FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("DP release does not protect"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace flynn::federated
