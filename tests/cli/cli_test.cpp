// End-to-end tests of the flynn CLI on real data: train → info → predict → eval, JSON
// outputs, and clean one-line errors with a non-zero exit on bad input.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

using test::read_text;
using test::run_cli;
using test::TempDir;
using test::write_text;

using test::expect_clean_error;

class CliDigits : public ::testing::Test {
 protected:
  void SetUp() override {
    digits_ = test::digits_csv();
    if (digits_.empty()) GTEST_SKIP() << "scikit-learn's digits.csv.gz not installed";
  }
  std::string digits_;
  TempDir dir_;
};

TEST_F(CliDigits, TrainInfoPredictRoundTrip) {
  const std::string model = dir_.file("digits.flynn");
  auto r = run_cli("train --data " + digits_ + " --model " + model + " --quiet --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto train = nlohmann::json::parse(r.out);
  EXPECT_EQ(train["rows"], 1797);
  EXPECT_EQ(train["features"], 64);
  EXPECT_EQ(train["classes"].size(), 10u);
  ASSERT_TRUE(std::filesystem::exists(model));

  r = run_cli("info --model " + model + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info["training_rows"], 1797);
  EXPECT_EQ(info["config"]["d"], 64);
  EXPECT_EQ(info["classes"][0]["label"], "0");

  // Predict the training rows (labelled): accuracy is printed and high.
  const std::string preds = dir_.file("preds.csv");
  r = run_cli("predict --model " + model + " --data " + digits_ + " --out " + preds + " --proba --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto pj = nlohmann::json::parse(r.out);
  EXPECT_GT(pj["accuracy"].get<double>(), 0.9);
  const std::string csv = read_text(preds);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "row,prediction,p_0,p_1,p_2,p_3,p_4,p_5,p_6,p_7,p_8,p_9");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1798);

  // The same rows without their label column: predictions still work, no accuracy.
  std::string unlabelled;
  {
    std::istringstream in(test::run_shell("zcat " + digits_).out);
    std::string line;
    while (std::getline(in, line)) unlabelled += line.substr(0, line.rfind(',')) + "\n";
  }
  write_text(dir_.file("nolabels.csv"), unlabelled);
  r = run_cli("predict --model " + model + " --data " + dir_.file("nolabels.csv") + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1798);
  EXPECT_EQ(r.err.find("accuracy"), std::string::npos);
}

TEST_F(CliDigits, SameInputsGiveByteIdenticalModels) {
  const std::string a = dir_.file("a.flynn"), b = dir_.file("b.flynn");
  ASSERT_EQ(run_cli("train --data " + digits_ + " --model " + a + " --threads 1 --quiet").exit_code, 0);
  ASSERT_EQ(run_cli("train --data " + digits_ + " --model " + b + " --threads 2 --quiet").exit_code, 0);
  EXPECT_EQ(read_text(a), read_text(b));
}

TEST_F(CliDigits, EvalReportsFoldAccuracyAndKnn) {
  auto r = run_cli("eval --data " + digits_ + " --folds 5 --knn --json --quiet --expansion-factor 64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fold_accuracy"].size(), 5u);
  EXPECT_GT(j["accuracy_mean"].get<double>(), 0.85);
  EXPECT_GT(j["knn"]["accuracy_mean"].get<double>(), 0.95);
  // Human output names the numbers.
  r = run_cli("eval --data " + digits_ + " --folds 3 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3-fold CV accuracy"), std::string::npos) << r.out;
}

TEST_F(CliDigits, HyperParameterErrorsNameTheParameter) {
  expect_clean_error(run_cli("train --data " + digits_ + " --model " + dir_.file("m") + " --s 100"), "s = 100");
  expect_clean_error(run_cli("train --data " + digits_ + " --model " + dir_.file("m") + " --gamma 1"), "gamma");
  expect_clean_error(run_cli("train --data " + digits_ + " --model " + dir_.file("m") + " --m 10 --rho 10"), "rho");
  EXPECT_FALSE(std::filesystem::exists(dir_.file("m")));
}

TEST_F(CliDigits, PredictRejectsWrongDimensionsAndForeignModels) {
  const std::string model = dir_.file("digits.flynn");
  ASSERT_EQ(run_cli("train --data " + digits_ + " --model " + model + " --quiet").exit_code, 0);
  write_text(dir_.file("narrow.csv"), "1,2,3\n4,5,6\n");
  expect_clean_error(run_cli("predict --model " + model + " --data " + dir_.file("narrow.csv")), "narrow.csv");
  // Truncated and foreign model files.
  const std::string bytes = read_text(model);
  write_text(dir_.file("cut.flynn"), bytes.substr(0, bytes.size() / 2));
  expect_clean_error(run_cli("predict --model " + dir_.file("cut.flynn") + " --data " + digits_), "cut.flynn");
  expect_clean_error(run_cli("info --model " + digits_), "not a flynn model");
}

TEST(Cli, BadDataFilesGiveOneLineErrors) {
  TempDir dir;
  write_text(dir.file("inf.csv"), "a,b,class\n1,2,x\n3,inf,y\n");
  expect_clean_error(run_cli("train --data " + dir.file("inf.csv") + " --model " + dir.file("m")), "inf.csv:3");
  // "nan" is a missing cell: an error only under --missing error (the default fills it).
  write_text(dir.file("nan.csv"), "a,b,class\n1,2,x\n3,nan,y\n");
  expect_clean_error(run_cli("train --data " + dir.file("nan.csv") + " --model " + dir.file("m") +
                             " --missing error"), "nan.csv:3");
  write_text(dir.file("ragged.csv"), "1,2,x\n3,y\n");
  expect_clean_error(run_cli("train --data " + dir.file("ragged.csv") + " --model " + dir.file("m")), "ragged.csv:2");
  write_text(dir.file("one.csv"), "1,2,x\n3,4,x\n");
  expect_clean_error(run_cli("train --data " + dir.file("one.csv") + " --model " + dir.file("m")), "class");
  write_text(dir.file("empty.csv"), "");
  expect_clean_error(run_cli("train --data " + dir.file("empty.csv") + " --model " + dir.file("m")), "empty");
  expect_clean_error(run_cli("train --data " + dir.file("missing.csv") + " --model " + dir.file("m")), "missing.csv");
  // Unknown label against --labels.
  write_text(dir.file("ok.csv"), "1,2,x\n3,4,y\n5,6,z\n");
  expect_clean_error(run_cli("train --data " + dir.file("ok.csv") + " --labels x,y --model " + dir.file("m")), "'z'");
  EXPECT_FALSE(std::filesystem::exists(dir.file("m")));
}

TEST(Cli, FailedWriteLeavesNothingBehind) {
  TempDir dir;
  write_text(dir.file("ok.csv"), "1,2,x\n3,4,y\n5,6,x\n7,1,y\n");
  const auto r = run_cli("train --data " + dir.file("ok.csv") + " --model " + dir.file("no/such/dir/m.flynn"));
  expect_clean_error(r, "m.flynn");
  std::size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST(Cli, LabelsFlagFixesClassOrderAndTestAccuracy) {
  TempDir dir;
  std::string train, test;
  for (int i = 0; i < 60; ++i) {
    train += std::to_string(i % 3 == 0 ? 10 + i % 7 : 1 + i % 5) + "," + std::to_string(i % 3 == 0 ? 1 : 9) + "," +
             (i % 3 == 0 ? "cat" : "dog") + "\n";
  }
  test = "12,1,cat\n2,9,dog\n";
  write_text(dir.file("train.csv"), train);
  write_text(dir.file("test.csv"), test);
  const auto r = run_cli("train --data " + dir.file("train.csv") + " --test " + dir.file("test.csv") +
                         " --labels dog,cat --model " + dir.file("m.flynn") + " --json --quiet --m 256 --s 1 --rho 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["classes"][0], "dog");
  EXPECT_EQ(j["test"]["rows"], 2);
  EXPECT_TRUE(j["test"].contains("accuracy"));
}

// flynn info without a model: this machine's SIMD target and kernels, as text and JSON;
// FLYNN_SIMD_TARGET pins the target (AVX2 on an x86 CPU that has it), and a value that is
// no target is a clean error naming the variable.
TEST(Cli, InfoWithoutAModelReportsTheSimdTargetAndKernels) {
  auto r = run_cli("info");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("SIMD target: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("block kernels: in use"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("one-row kernel: "), std::string::npos) << r.out;
  r = run_cli("info --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["block_kernels"].get<bool>());
  EXPECT_FALSE(j["simd_target"].get<std::string>().empty());
  const bool avx2 = j["cpu_targets"].get<std::string>().find("AVX2") != std::string::npos;
  if (avx2) {
    r = test::run_shell("FLYNN_SIMD_TARGET=avx2 " + std::string(FLYNN_CLI_PATH) + " info --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto pinned = nlohmann::json::parse(r.out);
    EXPECT_EQ(pinned["simd_target"], "AVX2");
    EXPECT_EQ(pinned["simd_pinned"], "AVX2");
    EXPECT_EQ(pinned["one_row_kernel_name"], "byte shuffle (Shuffle16)");
  }
  r = test::run_shell("FLYNN_SIMD_TARGET=avx9 " + std::string(FLYNN_CLI_PATH) + " info");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("FLYNN_SIMD_TARGET=avx9: unknown SIMD target 'avx9'"), std::string::npos)
      << r.err;
}

TEST(Cli, HelpForEverySubcommand) {
  for (const char* sub : {"train", "predict", "eval", "info", "demo", "bench"}) {
    const auto r = run_cli(std::string(sub) + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub;
  }
  EXPECT_NE(run_cli("").exit_code, 0);
  EXPECT_NE(run_cli("frobnicate").exit_code, 0);
}

// One vocabulary: --fashion-dir is the Fashion-MNIST folder everywhere and --out the output;
// bench and demo keep --data-dir (and demo --out-dir) as hidden aliases for old scripts.
TEST(Cli, FashionDirAndOutFlagsWithTheirOldSpellings) {
  for (const char* cmd : {"demo --skip-knn", "bench --smoke"})
    for (const char* flag : {"--fashion-dir", "--data-dir"}) {
      const auto r = run_cli(fmt::format("{} {} /nonexistent-fashion-{} -q", cmd, flag, flag + 2));
      EXPECT_EQ(r.exit_code, 1) << cmd << " " << flag;
      EXPECT_NE(r.err.find(fmt::format("/nonexistent-fashion-{}: no train-images", flag + 2)), std::string::npos)
          << cmd << " " << flag << ": " << r.err;
    }
  const auto help = run_cli("demo --help");
  EXPECT_NE(help.out.find("--fashion-dir"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--out "), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("--data-dir"), std::string::npos) << "aliases stay out of --help";
  EXPECT_EQ(help.out.find("--out-dir"), std::string::npos) << "aliases stay out of --help";
  for (const char* sub : {"reproduce privacy", "federated privacy-study", "reproduce scaling"}) {
    const auto h = run_cli(std::string(sub) + " --help");
    EXPECT_EQ(h.exit_code, 0) << sub;
    EXPECT_NE(h.out.find("--fashion-dir"), std::string::npos) << sub;
    EXPECT_NE(h.out.find("--out "), std::string::npos) << sub;
  }
}

TEST(Cli, OpenMlDatasetEndToEnd) {
  const std::string dir = test::openml_dir();
  if (dir.empty()) GTEST_SKIP() << "shared OpenML data not found";
  const std::string data = dir + "/1494_qsar-biodeg.csv.gz";
  if (!std::filesystem::exists(data)) GTEST_SKIP() << data << " missing";
  const auto r = run_cli("eval --data " + data + " --folds 5 --json --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rows"], 1055);
  EXPECT_GT(j["accuracy_mean"].get<double>(), 0.7);
}

}  // namespace
}  // namespace flynn
