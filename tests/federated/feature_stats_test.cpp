// Public standardisation statistics in a federation: one that uses them exchanges no
// statistic of its rows (byte-identical to central training with the same statistics), the
// parties agree on them, and standardising variants under DP need them. The file format:
// tests/core/feature_stats_file_test.cpp; the CLI's flag: tests/cli/feature_stats_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "flynn/calibration.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/io/model_file.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

namespace fed = federated;

struct Split {
  std::vector<Dataset> shards;
  std::vector<const Dataset*> ptrs;
};

Split split_in(const Dataset& data, int parties, std::uint64_t seed) {
  Split s;
  for (const auto& rows : fed::split_rows(data.labels, data.classes.size(), parties,
                                          fed::SplitSpec::parse("iid"), seed))
    s.shards.push_back(data.subset(rows));
  for (const Dataset& d : s.shards) s.ptrs.push_back(&d);
  return s;
}

FeatureStats stats_for(std::size_t d) {
  FeatureStats s;
  for (std::size_t j = 0; j < d; ++j) {
    s.mean.push_back(0.25f * static_cast<float>(j % 5));
    s.scale.push_back(1.0f + 0.5f * static_cast<float>(j % 3));
  }
  return s;
}

fed::FederationSettings settings_for(const Dataset& data, const char* variant) {
  fed::FederationSettings settings;
  settings.hyper.m = 512;
  settings.hyper.rho = 16;
  settings.hyper.seed = 77;
  settings.hyper.variant = parse_variant(variant);
  settings.labels = data.classes;
  settings.threads = 1;
  return settings;
}

TEST(FeatureStatsFederated, PublicStatisticsGiveTheCentralModelWithThemByteForByte) {
  const Dataset data = test::blobs(3, 40, 9, 5);
  for (const char* variant : {"zsign-q", "z", "thermo-sign", "zsign-q+paper"}) {
    fed::FederationSettings settings = settings_for(data, variant);
    settings.feature_stats = stats_for(9);
    const Split split = split_in(data, 3, 11);
    const fed::ColonyOutcome out = fed::run_colony(split.ptrs, settings);
    FlyNN central(settings.hyper.resolve(9, data.classes.size()), data.classes, 1);
    central.set_feature_stats(stats_for(9));
    // fit() with the statistics given: the rows, then the calibration on their leave-one-out
    // scores; the federation records its missing-value policy as file training does.
    CalibrationSample sample(central.config(), data.n_rows);
    central.partial_fit(data, {}, &sample);
    central.calibrate(sample);
    central.set_missing_policy(settings.missing);
    EXPECT_EQ(out.model.feature_stats(), stats_for(9)) << variant;
    EXPECT_EQ(out.model_file, io::serialize_model(central)) << variant;
  }
}

TEST(FeatureStatsFederated, PartiesMustAgreeOnTheStatisticsAndTheirWidth) {
  const Dataset data = test::blobs(2, 30, 6, 3);
  const Split split = split_in(data, 2, 1);
  fed::FederationSettings settings = settings_for(data, "zsign-q");
  settings.feature_stats = stats_for(5);
  try {
    fed::run_colony(split.ptrs, settings);
    ADD_FAILURE() << "no error";
  } catch (const fed::FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("5 values, the data 6 features"), std::string::npos) << e.what();
  }
  settings = settings_for(data, "paper");
  settings.feature_stats = stats_for(6);
  try {
    fed::run_colony(split.ptrs, settings);
    ADD_FAILURE() << "no error";
  } catch (const fed::FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("standardises nothing"), std::string::npos) << e.what();
  }
}

TEST(FeatureStatsFederated, StandardisingVariantsUnderDpNeedPublicStatistics) {
  const Dataset data = test::blobs(2, 40, 6, 8);
  const Split split = split_in(data, 2, 4);
  fed::FederationSettings settings = settings_for(data, "zsign-q");
  fed::DpParams dp;
  dp.epsilon = 50;
  dp.T = 32;
  settings.dp = dp;
  try {
    fed::run_colony(split.ptrs, settings);
    ADD_FAILURE() << "no error";
  } catch (const fed::FederationError& e) {
    EXPECT_NE(std::string(e.what()).find("--feature-stats"), std::string::npos) << e.what();
  }
  settings.feature_stats = stats_for(6);
  const fed::ColonyOutcome out = fed::run_colony(split.ptrs, settings);
  EXPECT_EQ(out.model.feature_stats(), stats_for(6));
  ASSERT_TRUE(out.privacy.has_value());
}

}  // namespace
}  // namespace flynn
