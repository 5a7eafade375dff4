// What a user gets for a mistake: command-line errors in the "flynn: error: ..." form
// with suggestions for mistyped commands and flags, a label column that looks wrong, and
// `flynn tune --time-limit` bounding the whole command.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace flynn {
namespace {

namespace fs = std::filesystem;

TEST(CliUsage, MistypedCommandGetsASuggestion) {
  const auto r = test::run_cli("trian --data x.csv");
  test::expect_clean_error(r, "'trian' is not a command of 'flynn'; did you mean 'train'?");
  const auto nested = test::run_cli("federated simulte");
  test::expect_clean_error(nested, "did you mean 'simulate'?");
  // Nothing near: the commands are listed instead.
  test::expect_clean_error(test::run_cli("zzzzzzzz"), "(its commands: ");
  test::expect_clean_error(test::run_cli(""), "'flynn' needs a command (");
}

TEST(CliUsage, MistypedFlagGetsASuggestionEvenWhenARequiredOneIsMissing) {
  // CLI11 would first complain that --model is missing; the typo is what to fix.
  const auto r = test::run_cli("train --data x.csv --modle m.flynn");
  test::expect_clean_error(r, "unknown option '--modle' for 'flynn train'; did you mean --model?");
  test::expect_clean_error(test::run_cli("eval --data x.csv --fodls 3"), "did you mean --folds?");
  test::expect_clean_error(test::run_cli("eval --data x.csv --zzzzzzzz"),
                           "unknown option '--zzzzzzzz'");
}

TEST(CliUsage, EveryParseErrorHasFlynnsForm) {
  test::expect_clean_error(test::run_cli("eval --data x.csv --folds 1"), "--folds");
  test::expect_clean_error(test::run_cli("train --data x.csv"), "--model is required");
  test::expect_clean_error(test::run_cli("train --data x.csv --model m --seed -1"), "--seed");
  // Negative numbers are values, not flags.
  const auto neg = test::run_cli("train --data x.csv --model m --label-col -1");
  EXPECT_EQ(neg.err.find("unknown option"), std::string::npos) << neg.err;
}

TEST(CliUsage, HelpIsUnchanged) {
  const auto top = test::run_cli("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_TRUE(top.err.empty()) << top.err;
  EXPECT_NE(top.out.find("flynn: FlyNN"), std::string::npos);
  EXPECT_NE(top.out.find("Subcommands:"), std::string::npos);
  const auto sub = test::run_cli("eval --help");
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.out.find("--report"), std::string::npos);
  EXPECT_EQ(test::run_cli("--version").exit_code, 0);
}

class LabelColumn : public ::testing::Test {
 protected:
  test::TempDir dir_;
};

TEST_F(LabelColumn, IdentifiersAsClassesAreWarnedAbout) {
  // 40 rows whose "label" is their id: most rows have a class of their own.
  std::string csv = "x,y,id\n";
  for (int r = 0; r < 40; ++r)
    csv += std::to_string(r % 7) + "," + std::to_string(r % 5) + ",row" + std::to_string(r) + "\n";
  const std::string data = dir_.file("ids.csv");
  test::write_text(data, csv);
  for (const std::string& cmd :
       {"train --model " + dir_.file("m.flynn"), std::string("eval --folds 2")}) {
    const auto r = test::run_cli(cmd + " --data " + data + " --quiet");
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("flynn: warning: " + data +
                         ": the label column 'id' has 40 classes for 40 rows"),
              std::string::npos)
        << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("--label-col"), std::string::npos) << r.err;
  }
  // Proper classes: no warning.
  std::string fine = "x,y,c\n";
  for (int r = 0; r < 40; ++r)
    fine += std::to_string(r % 7) + "," + std::to_string(r % 5) + "," + (r % 2 ? "a" : "b") + "\n";
  test::write_text(data, fine);
  const auto ok =
      test::run_cli("train --model " + dir_.file("m.flynn") + " --data " + data + " --quiet");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.err.find("warning"), std::string::npos) << ok.err;
}

TEST_F(LabelColumn, MissingLabelsAreRefusedNamingTheColumn) {
  test::write_text(dir_.file("na.csv"), "x,y,c\n1,2,a\n2,3,NA\n3,4,b\n");
  const auto r = test::run_cli("train --data " + dir_.file("na.csv") + " --model " +
                               dir_.file("m.flynn") + " --quiet");
  test::expect_clean_error(r, "missing label 'NA' in the label column 'c'");
  EXPECT_NE(r.err.find("--label-col"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_.file("m.flynn")));
}

TEST_F(LabelColumn, SharedTableWithAWrongLabelColumn) {
  const std::string openml = test::openml_dir();
  if (openml.empty()) GTEST_SKIP() << "../shared/data not found";
  const std::string credit =
      (fs::path(openml).parent_path() / "tables" / "credit_data.csv.gz").string();
  // Income: 381 NA cells, which must never become a class.
  test::expect_clean_error(test::run_cli("train --data " + credit + " --label-col Income --model " +
                                         dir_.file("i.flynn") + " --quiet"),
                           "missing label 'NA' in the label column 'Income'");
  // Amount: 285 values, 138 of them on a single row.
  const auto r = test::run_cli("train --data " + credit + " --label-col Amount --model " +
                               dir_.file("a.flynn") + " --quiet");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the label column 'Amount' has 285 classes, 138 of them with a single row"),
            std::string::npos)
      << r.err;
}

TEST(TuneTimeLimit, BoundsTheWholeCommand) {
  const std::string openml = test::openml_dir();
  if (openml.empty()) GTEST_SKIP() << "../shared/data not found";
  test::TempDir dir;
  // A budget that would take minutes; the limit ends the whole command, model saved.
  const double limit = 6.0;
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = test::run_cli("tune --data " + openml + "/1494_qsar-biodeg.csv.gz --model " +
                               dir.file("m.flynn") + " --budget 2000 --time-limit 6 --report " +
                               dir.file("report") + " --json --quiet");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(seconds, limit + 4.0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["search"]["time_limited"].get<bool>());
  EXPECT_TRUE(fs::exists(dir.file("m.flynn")));
  EXPECT_TRUE(fs::exists(dir.file("report/report.html")));
}

}  // namespace
}  // namespace flynn
