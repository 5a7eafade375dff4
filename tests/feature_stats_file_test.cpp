// Public standardisation statistics (--feature-stats): the file format and its errors, a
// federation that uses them exchanging no statistic of its rows (byte-identical to central
// training with the same statistics), agreement on them, and standardising variants under
// DP, which need them.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "flynn/calibration.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/io/feature_stats_file.hpp"
#include "flynn/io/model_file.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

std::string error_of(const std::string& text) {
  try {
    io::parse_feature_stats(text, "s.csv");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FeatureStatsFile, TwoRowsOfCentresAndScales) {
  const FeatureStats s = io::parse_feature_stats("0.5,-1,3\n2,0.25,1\n", "s.csv");
  EXPECT_EQ(s.mean, (std::vector<float>{0.5f, -1.0f, 3.0f}));
  EXPECT_EQ(s.scale, (std::vector<float>{2.0f, 0.25f, 1.0f}));
  // A header of names and another delimiter are fine.
  EXPECT_EQ(io::parse_feature_stats("a;b;c\n0.5;-1;3\n2;0.25;1\n", "s.csv"), s);
  EXPECT_EQ(io::feature_stats_digest(s), io::feature_stats_digest(io::parse_feature_stats("0.5,-1,3\n2,.25,1\n", "t")));
  EXPECT_NE(io::feature_stats_digest(s), io::feature_stats_digest(io::parse_feature_stats("0.5,-1,3\n2,0.5,1\n", "t")));
}

TEST(FeatureStatsFile, EveryOtherShapeIsAnErrorNamingTheFile) {
  EXPECT_NE(error_of("1,2\n").find("exactly 2 rows"), std::string::npos);
  EXPECT_NE(error_of("1,2\n3,4\n5,6\n").find("exactly 2 rows"), std::string::npos);
  EXPECT_NE(error_of("1,2\n3,0\n").find("scale of feature 2"), std::string::npos);
  EXPECT_NE(error_of("1,2\n3,-1\n").find("positive"), std::string::npos);
  EXPECT_NE(error_of("1,\n3,1\n").find("s.csv"), std::string::npos);  // missing centre
  EXPECT_NE(error_of("1,2\n3\n").find("s.csv"), std::string::npos);   // ragged
  EXPECT_NE(error_of("").find("s.csv"), std::string::npos);
  EXPECT_NE(error_of("x,y\nred,2\nblue,3\n").find("s.csv"), std::string::npos);
}

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

TEST(FeatureStatsCli, TrainAndSimulateWithPublicStatistics) {
  test::TempDir dir;
  std::string csv;
  const Dataset data = test::blobs(2, 50, 3, 21);
  for (std::size_t r = 0; r < data.n_rows; ++r)
    csv += fmt::format("{},{},{},{}\n", data.row(r)[0], data.row(r)[1], data.row(r)[2],
                       data.classes.name(data.labels[r]));
  const std::string train = dir.file("t.csv"), stats = dir.file("s.csv"), model = dir.file("m.flynn");
  test::write_text(train, csv);
  test::write_text(stats, "0,0,0\n3,3,3\n");
  auto r = test::run_cli("train --data " + train + " --model " + model + " --variant zsign-q --feature-stats " +
                         stats + " --quiet --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = test::run_cli("train --data " + train + " --model " + dir.file("p.flynn") + " --variant paper --feature-stats " +
                    stats + " --quiet");
  test::expect_clean_error(r, "standardises nothing");
  test::write_text(dir.file("w.csv"), "0,0\n1,1\n");
  r = test::run_cli("train --data " + train + " --model " + dir.file("w.flynn") +
                    " --variant zsign-q --feature-stats " + dir.file("w.csv") + " --quiet");
  test::expect_clean_error(r, "2 values, the data 3 features");
  r = test::run_cli("federated simulate --data " + train + " --parties 2 --variant zsign-q --dp-epsilon 5 --dp-T 8 --quiet");
  test::expect_clean_error(r, "--feature-stats");
  r = test::run_cli("federated simulate --data " + train + " --parties 2 --variant zsign-q --dp-epsilon 5 --dp-T 8 "
                    "--feature-stats " + stats + " --quiet --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace flynn
