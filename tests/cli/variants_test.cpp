// --variant end to end on scikit-learn's digits: train → info → predict with a variant
// model, the paper variant's file unchanged, CV with a standardising variant, and clean
// errors for bad variant flags.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::read_text;
using test::run_cli;
using test::TempDir;

class VariantsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    digits_ = test::digits_csv();
    if (digits_.empty()) GTEST_SKIP() << "scikit-learn's digits.csv.gz not installed";
  }
  std::string digits_;
  TempDir dir_;
};

TEST_F(VariantsCli, TrainInfoPredictWithAVariant) {
  const std::string model = dir_.file("zsign.flynn");
  auto r = run_cli("train --data " + digits_ + " --model " + model + " --variant zsign --m 4096 --quiet --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["config"]["variant"], "zsign");
  r = run_cli("info --model " + model + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["config"]["variant"], "zsign");
  r = run_cli("predict --model " + model + " --data " + digits_ + " --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(r.out)["accuracy"].get<double>(), 0.9);
  // Format version 10: a trained model carries its fitted calibration and missing-value policy.
  EXPECT_EQ(read_text(model)[8], 10);
  r = run_cli("train --data " + digits_ + " --model " + model + " --variant zsign --m 4096 --filter-scoring absolute --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_text(model)[8], 10);
  r = run_cli("info --model " + model + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["config"]["filter_scoring"], "absolute");
}

TEST_F(VariantsCli, PaperAndZsignVariantsWriteDifferentModels) {
  const std::string a = dir_.file("a.flynn"), b = dir_.file("b.flynn");
  const std::string hyper = " --m 4096 --s 8 --rho 16 --gamma 0.5 --quiet";
  ASSERT_EQ(run_cli("train --data " + digits_ + " --model " + a + " --variant paper" + hyper).exit_code, 0);
  ASSERT_EQ(run_cli("train --data " + digits_ + " --model " + b + " --variant zsign" + hyper).exit_code, 0);
  EXPECT_EQ(read_text(a)[8], 10);  // the oldest format that holds a fitted calibration
  EXPECT_NE(read_text(a), read_text(b));
  const auto r = run_cli("info --model " + a + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["config"]["variant"], "paper");
}

TEST_F(VariantsCli, EvalWithAStandardisingVariant) {
  auto r = run_cli("eval --data " + digits_ + " --folds 3 --variant zsign-q --m 4096 --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["config"]["variant"], "zsign-q");
  EXPECT_GT(j["accuracy_mean"].get<double>(), 0.9);
}

TEST_F(VariantsCli, BadVariantFlagsAreCleanErrors) {
  auto r = run_cli("train --data " + digits_ + " --model " + dir_.file("m") + " --variant zscore");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128);
  EXPECT_NE(r.err.find("zscore"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("zsign"), std::string::npos) << r.err;  // lists the names
  r = run_cli("train --data " + digits_ + " --model " + dir_.file("m") + " --variant zsign --preprocess densify");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128);
  EXPECT_NE(r.err.find("densify"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace flynn
