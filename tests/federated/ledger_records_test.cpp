// The DP budget ledger knows the records, not the file: the same rows
// reordered, reformatted or recompressed share one budget, a different record set has its
// own, and ledgers keyed by the file's bytes (older flynn) still count for that very file.
// End to end over the CLI: tests/cli/dp_ledger_records_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace flynn::federated
