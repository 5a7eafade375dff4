// The DP budget ledger knows the records, not the file (issue 18, item 5): the same rows
// reordered, reformatted or recompressed share one budget, a different record set has its
// own, and ledgers keyed by the file's bytes (older flynn) still count for that very file.
// End to end: a gRPC federation whose second release on reformatted shards is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "federation_test_support.hpp"
#include "flynn/build_config.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/budget_ledger.hpp"
#include "flynn/io/loaders.hpp"
#include "test_support.hpp"

namespace flynn::federated {
namespace {

PrivacyAccount spend(double eps) {
  PrivacyAccount a;
  a.per_party = eps;
  a.T = 10;
  a.parties = 3;
  return a;
}

// The key of a file's records as `federated join` loads them (missing cells left NaN).
std::string key_of(const std::string& path) {
  io::LoadOptions o;
  o.impute = false;
  return records_fingerprint(io::load_dataset(path, o));
}

const char* kRows = "1,2,a\n3,4.5,b\n0,-1,a\n2,2,b\n,7,a\n";

TEST(LedgerRecords, SameRecordsInAnyOrderSpellingOrFileAreOneKey) {
  test::TempDir dir;
  auto file = [&](const std::string& name, const std::string& text) {
    test::write_text(dir.file(name), text);
    return dir.file(name);
  };
  const std::string base = key_of(file("base.csv", kRows));
  EXPECT_EQ(base.rfind("records-sha256:", 0), 0u) << base;
  EXPECT_EQ(base.size(), std::string("records-sha256:").size() + 64);
  const std::vector<std::string> same = {
      file("reordered.csv", "2,2,b\n,7,a\n0,-1,a\n1,2,a\n3,4.5,b\n"),
      file("spelled.csv", "1.0,2.00,a\n3e0,4.50,b\n-0,-1.0,a\n+2,2,b\nNA,7,a\n"),
      file("spaces.csv", "1 , 2 ,a\n 3,4.5 , b\n0, -1,a\n2 ,2,b\n  ,7,a\n"),
      file("semicolons.csv", "1;2;a\n3;4.5;b\n0;-1;a\n2;2;b\n;7;a\n"),
      file("quoted.csv", "\"1\",2,\"a\"\n3,\"4.5\",b\n0,-1,a\n2,2,b\n,7,\"a\"\n"),
      file("header.csv", std::string("x,y,label\n") + kRows),
      file("crlf.csv", "1,2,a\r\n3,4.5,b\r\n0,-1,a\r\n\r\n2,2,b\r\n,7,a\r\n"),
      file("weka.arff", "@relation r\n@attribute x numeric\n@attribute y numeric\n@attribute label {a,b}\n"
                        "@data\n3,4.5,b\n1,2,a\n0,-1,a\n2,2,b\n?,7,a\n"),
  };
  for (const std::string& f : same) EXPECT_EQ(key_of(f), base) << f;
  // Recompressed: the base file gzipped, and the reordered one gzipped at another level.
  const auto gz = test::run_shell(fmt::format("gzip -c {} > {}.gz && gzip -1 -c {} > {}.gz",
                                              dir.file("base.csv"), dir.file("base.csv"),
                                              dir.file("reordered.csv"), dir.file("reordered.csv")));
  ASSERT_EQ(gz.exit_code, 0) << gz.err;
  EXPECT_EQ(key_of(dir.file("base.csv.gz")), base);
  EXPECT_EQ(key_of(dir.file("reordered.csv.gz")), base);

  const std::vector<std::string> other = {
      file("value.csv", "1,2,a\n3,4.25,b\n0,-1,a\n2,2,b\n,7,a\n"),
      file("label.csv", "1,2,b\n3,4.5,b\n0,-1,a\n2,2,b\n,7,a\n"),
      file("fewer.csv", "1,2,a\n3,4.5,b\n0,-1,a\n2,2,b\n"),
      file("more.csv", std::string(kRows) + "5,5,a\n"),
      file("twice.csv", std::string(kRows) + "1,2,a\n"),  // a multiset: a duplicate counts
      file("filled.csv", "1,2,a\n3,4.5,b\n0,-1,a\n2,2,b\n0,7,a\n"),  // a missing cell is not 0
      file("swapped.csv", "2,1,a\n4.5,3,b\n-1,0,a\n2,2,b\n7,,a\n"),  // positional columns
  };
  for (const std::string& f : other) EXPECT_NE(key_of(f), base) << f;
}

TEST(LedgerRecords, ReformattedRecordsShareTheBudget) {
  test::TempDir dir;
  test::write_text(dir.file("a.csv"), kRows);
  test::write_text(dir.file("b.csv"), "2;2;b\n;7;a\n0;-1.0;a\n1;2;a\n3;4.50;b\n");
  test::write_text(dir.file("c.csv"), "9,9,a\n8,8,b\n");
  const std::string ledger = dir.file("ledger.tsv");
  BudgetLedger first(ledger, key_of(dir.file("a.csv")), 3.0);
  first.charge(spend(2.0), DpUnit::Record, "first");
  BudgetLedger again(ledger, key_of(dir.file("b.csv")), 3.0);
  EXPECT_NEAR(again.spent(), 2.0, 1e-12);
  try {
    again.charge(spend(2.0), DpUnit::Record, "the same records, reformatted");
    FAIL() << "the second release on the same records was accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("DP budget exceeded"), std::string::npos) << m;
    // The refusal is told to every party: it carries no digest of the rows.
    EXPECT_EQ(m.find(key_of(dir.file("a.csv")).substr(15, 12)), std::string::npos) << m;
  }
  EXPECT_EQ(again.entries().size(), 1u);
  // Other records: their own budget.
  BudgetLedger other(ledger, key_of(dir.file("c.csv")), 3.0);
  EXPECT_EQ(other.spent(), 0.0);
  other.charge(spend(2.0), DpUnit::Record, "other data");
}

TEST(LedgerRecords, LegacyEntriesKeyedByTheFileStillCount) {
  test::TempDir dir;
  test::write_text(dir.file("a.csv"), kRows);
  test::write_text(dir.file("a2.csv"), "2,2,b\n,7,a\n0,-1,a\n1,2,a\n3,4.5,b\n");
  const std::string legacy = file_fingerprint(dir.file("a.csv"));
  ASSERT_EQ(legacy.size(), 64u);
  // A ledger as flynn wrote it before: keyed by the SHA-256 of the file's bytes.
  test::write_text(dir.file("old.tsv"),
                   fmt::format("{}\t2025-01-01T00:00:00Z\t2.5\tpaper\t10\t3\told run\n", legacy));
  BudgetLedger l(dir.file("old.tsv"), key_of(dir.file("a.csv")), 3.0, {legacy});
  EXPECT_NEAR(l.spent(), 2.5, 1e-12);
  EXPECT_THROW(l.charge(spend(1.0), DpUnit::Paper, "beyond"), Error);
  l.charge(spend(0.5), DpUnit::Paper, "fits");
  const auto entries = l.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries.back().fingerprint, key_of(dir.file("a.csv")));  // new entries: the records key
  // The same records in another file: the new entry counts, the legacy one (a file key)
  // cannot be matched to records and does not.
  BudgetLedger moved(dir.file("old.tsv"), key_of(dir.file("a2.csv")), 3.0,
                     {file_fingerprint(dir.file("a2.csv"))});
  EXPECT_NEAR(moved.spent(), 0.5, 1e-12);
}

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
