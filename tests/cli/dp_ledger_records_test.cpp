// The DP budget ledger knows the records, not the file, end to end: a gRPC federation of
// CLI processes whose second release on reordered, respelt and recompressed shards is
// refused everywhere, writing nothing (the ledger's keys: tests/federated/ledger_records_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_federation.hpp"
#include "flynn/build_config.hpp"
#include "flynn/federated/budget_ledger.hpp"
#include "test_support.hpp"

namespace flynn::federated {
namespace {

#if FLYNN_HAVE_GRPC

// Three `flynn federated join` processes with ledgers and a public schema: the release is
// recorded; the same parties with their shards reordered, respelt (another delimiter,
// spaces, "1.0") and gzipped are refused, everywhere, writing nothing.
TEST(LedgerRecordsGrpc, SecondReleaseOnReformattedShardsIsRefused) {
  test::TempDir dir;
  const std::string pki = dir.file("pki");
  test::make_federation_pki(pki, {"party0", "party1", "party2"});
  const char* colours[] = {"red", "green", "blue"};
  // Per party: rows of (x, y, colour, label); party 1 has one row of a colour only it holds.
  std::vector<std::vector<std::array<std::string, 4>>> rows(3);
  for (int p = 0; p < 3; ++p)
    for (int i = 0; i < 40; ++i)
      rows[p].push_back({std::to_string(i % 7 + p), std::to_string((i * 3) % 5),
                         p == 1 && i == 3 ? "ochre-91c2" : colours[(i + p) % 3], i % 2 ? "a" : "b"});
  auto write = [&](int p, const std::string& name, const std::string& sep, bool reverse, bool decimals) {
    std::string t = fmt::format("x{0}y{0}colour{0}label\n", sep);
    auto r = rows[p];
    if (reverse) std::reverse(r.begin(), r.end());
    for (const auto& row : r) {
      const std::string x = decimals ? row[0] + ".0" : row[0], y = decimals ? row[1] + ".00" : row[1];
      t += fmt::format("{1}{0}{2}{0}{3}{0}{4}\n", sep, x, y, row[2], row[3]);
    }
    test::write_text(dir.file(name), t);
    return dir.file(name);
  };
  test::write_text(dir.file("schema.json"),
                   R"({"format": "flynn table schema", "version": 1, "columns": [{"name": "x"},
                       {"name": "y"}, {"name": "colour", "categories": ["blue", "green", "red"]}],
                       "label": "label"})");
  const std::string serve = "--labels a,b --m 128 --rho 8 --seed 5 --dp-epsilon 2 --dp-T 12 --dp-unit record "
                            "--deadline 60 --model " + dir.file("serve.model");
  auto joins = [&](const std::vector<std::string>& shards, const std::string& round) {
    std::vector<std::string> flags;
    for (int p = 0; p < 3; ++p)
      flags.push_back(fmt::format("--data {} --model {} --schema {} --dp-ledger {} --dp-budget 3 --json --quiet",
                                  shards[p], dir.file(fmt::format("{}{}.model", round, p)), dir.file("schema.json"),
                                  dir.file(fmt::format("ledger{}.tsv", p))));
    return flags;
  };
  const std::vector<std::string> first = {write(0, "s0.csv", ",", false, false), write(1, "s1.csv", ",", false, false),
                                          write(2, "s2.csv", ",", false, false)};
  const test::CliFederation one = test::run_cli_federation(dir.path().string(), pki, serve, joins(first, "one"), "one");
  ASSERT_EQ(one.serve.exit_code, 0) << one.serve.err;
  for (int p = 0; p < 3; ++p) {
    ASSERT_EQ(one.joins[p].exit_code, 0) << one.joins[p].err;
    const std::string model = test::read_text(dir.file(fmt::format("one{}.model", p)));
    EXPECT_EQ(model.find("ochre-91c2"), std::string::npos) << "party " << p;
    const auto j = nlohmann::json::parse(one.joins[p].out);
    EXPECT_NEAR(j["differential_privacy"]["ledger_spent"].get<double>(), 2.0, 1e-9);
    // Other parties' timings and rows are withheld (DP, secure aggregation).
    for (const auto& q : j["parties_detail"]) {
      EXPECT_FALSE(q.contains("seconds_training")) << q;
      EXPECT_FALSE(q.contains("rows")) << q;
    }
  }
  EXPECT_EQ(test::read_text(dir.file("serve.model")).find("ochre-91c2"), std::string::npos);
  EXPECT_EQ(one.serve.err.find("ochre-91c2"), std::string::npos);

  // The same records: reversed; respelt with ';' and decimals; gzipped.
  write(2, "s2.csv", ",", false, false);
  const auto gz = test::run_shell(fmt::format("gzip -9 -c {} > {}", dir.file("s2.csv"), dir.file("s2.csv.gz")));
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  const std::vector<std::string> second = {write(0, "r0.csv", ",", true, false), write(1, "r1.csv", " ; ", false, true),
                                           dir.file("s2.csv.gz")};
  const test::CliFederation two = test::run_cli_federation(dir.path().string(), pki, serve, joins(second, "two"), "two");
  EXPECT_NE(two.serve.exit_code, 0);
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(two.joins[p].exit_code, 1) << two.joins[p].err;
    EXPECT_NE(two.joins[p].err.find("DP budget exceeded"), std::string::npos) << two.joins[p].err;
    EXPECT_FALSE(std::filesystem::exists(dir.file(fmt::format("two{}.model", p))));
    // The refused release recorded nothing.
    BudgetLedger l(dir.file(fmt::format("ledger{}.tsv", p)), "any", 3.0);
    EXPECT_EQ(l.entries().size(), 1u);
  }
}

#endif  // FLYNN_HAVE_GRPC

}  // namespace
}  // namespace flynn::federated
