// Checks before a federation starts: `flynn federated join --check` finds every problem a
// party's kit and data have against the settings it knows, at once and without a
// coordinator; and a party whose table lacks a column is told which column, not only that
// its d differs.
#include <chrono>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

// A table as users have them: a text column, a missing cell, a label column.
void write_messy_table(const std::string& path) {
  std::ofstream f(path);
  f << "age,colour,income,outcome\n";
  for (int r = 0; r < 60; ++r)
    f << fmt::format("{},{},{},{}\n", 20 + r % 40, r % 3 == 0 ? "red" : "blue", r == 7 ? "NA" : std::to_string(1000 + 37 * r),
                     r % 2 ? "yes" : "no");
}

void write_numeric_table(const std::string& path, bool with_f3, int offset) {
  std::ofstream f(path);
  f << (with_f3 ? "f1,f2,f3,class\n" : "f1,f2,class\n");
  for (int r = 0; r < 40; ++r) {
    const int c = r % 2;
    f << fmt::format("{},{},", c * 3 + (r + offset) % 5 * 0.1, 1 - c + (r * 7 + offset) % 3 * 0.2);
    if (with_f3) f << fmt::format("{},", (r + offset) % 4);
    f << fmt::format("c{}\n", c);
  }
}

struct Kits {
  test::TempDir dir;
  int port = test::free_port();
  Kits() {
    const auto r = test::run_cli(
        fmt::format("federated provision --out {} --coordinator 127.0.0.1:{} --parties a,b,c", dir.file("fed"), port));
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  std::string kit(const char* name) const { return dir.file(fmt::format("fed/{}", name)); }
};

TEST(PartyReadyCheck, AMessyTableUnderDpGetsEveryProblemAtOnceWithoutACoordinator) {
  Kits k;
  write_messy_table(k.dir.file("messy.csv"));
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = test::run_cli(fmt::format("federated join --kit {} --data {} --check --dp-epsilon 1 --dp-T 10",
                                           k.kit("a"), k.dir.file("messy.csv")));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  test::expect_clean_error(r, "this party is not ready: 2 problems");
  // Both problems, each named: the text column by name, and the missing cells.
  EXPECT_NE(r.out.find("problem 1: the data has text (categorical) columns ('colour')"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--schema FILE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("problem 2: the data has missing cells"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--missing zero"), std::string::npos) << r.out;
  // Nobody listens on the kit's port: the check never waited for a coordinator.
  EXPECT_LT(seconds, 20.0);
}

TEST(PartyReadyCheck, TheSameTableReadyWithTheFlagsItNamedExitsZero) {
  Kits k;
  write_messy_table(k.dir.file("messy.csv"));
  // Without DP: nothing stops it, and the DP checks are said to be left out.
  auto r = test::run_cli(fmt::format("federated join --kit {} --data {} --check", k.kit("b"), k.dir.file("messy.csv")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("data: 60 rows"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ready:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not checked here: the checks only differential privacy makes"), std::string::npos) << r.out;
  // Under DP with the public schema and --missing zero the check names: it passes.
  ASSERT_EQ(test::run_cli(fmt::format("schema --data {} --out {}", k.dir.file("messy.csv"), k.dir.file("schema.json")))
                .exit_code,
            0);
  r = test::run_cli(fmt::format("federated join --kit {} --data {} --check --dp-epsilon 1 --dp-T 10 --schema {} "
                                "--missing zero --json",
                                k.kit("b"), k.dir.file("messy.csv"), k.dir.file("schema.json")));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("ready"), true);
  EXPECT_EQ(j.at("rows"), 60);
  EXPECT_TRUE(j.at("problems").empty());
}

TEST(PartyReadyCheck, KitAndFileProblemsAreListedTogether) {
  Kits k;
  write_messy_table(k.dir.file("messy.csv"));
  // The coordinator's kit used by a party, a data file that does not exist, a model folder
  // that does not exist: three problems, one run.
  const auto r = test::run_cli(fmt::format("federated join --kit {} --data {} --model {} --check --json",
                                           k.kit("coordinator"), k.dir.file("absent.csv"),
                                           k.dir.file("no/such/folder/m.flynn")));
  EXPECT_NE(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("ready"), false);
  const std::string all = j.at("problems").dump();
  EXPECT_NE(all.find("the coordinator's kit, not a party's"), std::string::npos) << all;
  EXPECT_NE(all.find("absent.csv"), std::string::npos) << all;
  EXPECT_NE(all.find("is not a directory"), std::string::npos) << all;
}

TEST(PartyReadyCheck, AKitThatCannotBeReadIsOneProblem) {
  Kits k;
  write_messy_table(k.dir.file("messy.csv"));
  // The kit is read once: its error is listed once, not again for each thing it would give
  // (the connection options, the labels).
  const auto r = test::run_cli(fmt::format("federated join --kit {} --data {} --check --json",
                                           k.dir.file("no-such-kit"), k.dir.file("messy.csv")));
  EXPECT_NE(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("ready"), false);
  std::size_t kit_problems = 0;
  for (const auto& p : j.at("problems")) kit_problems += p.get<std::string>().find("not a kit folder") != std::string::npos;
  EXPECT_EQ(kit_problems, 1u) << j.at("problems").dump();
}

TEST(FederationColumns, APartyWhoseTableLacksAColumnIsToldWhichOne) {
  Kits k;
  write_numeric_table(k.dir.file("a.csv"), true, 0);
  write_numeric_table(k.dir.file("b.csv"), false, 1);
  write_numeric_table(k.dir.file("c.csv"), true, 2);
  const auto r = test::run_shell(fmt::format(
      "cd {0} && F='{1}'; "
      "( timeout 60 $F federated serve --kit fed/coordinator --labels c0,c1 --deadline 30 > serve.out 2> serve.err; "
      "echo $? > serve.rc ) & "
      "for n in a b c; do ( timeout 60 $F federated join --kit fed/$n --data $n.csv --model $n.model --deadline 30 "
      "> $n.out 2> $n.err; echo $? > $n.rc ) & done; wait",
      k.dir.path().string(), FLYNN_CLI_PATH));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* n : {"a", "b", "c"}) {
    const std::string err = test::read_text(k.dir.file(fmt::format("{}.err", n)));
    EXPECT_NE(test::read_text(k.dir.file(fmt::format("{}.rc", n))), "0\n") << n;
    // Whichever party is party 0, the column is named: b lacks f3, or b's party 0 has it.
    EXPECT_NE(err.find("'f3'"), std::string::npos) << n << ": " << err;
    EXPECT_EQ(err.find("input dimension"), std::string::npos) << n << ": " << err;
    EXPECT_FALSE(std::ifstream(k.dir.file(fmt::format("{}.model", n))).good()) << n;
  }
}

}  // namespace
}  // namespace flynn
