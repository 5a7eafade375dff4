// The per-party DP budget ledger and the privacy unit's accounting.
#include <gtest/gtest.h>

#include "flynn/error.hpp"
#include "flynn/federated/budget_ledger.hpp"
#include "test_support.hpp"

namespace flynn::federated {
namespace {

PrivacyAccount spend(double eps) {
  PrivacyAccount a;
  a.per_party = eps;
  a.T = 10;
  a.parties = 4;
  return a;
}

TEST(BudgetLedger, RecordsReleasesAndRefusesBeyondTheBudget) {
  test::TempDir dir;
  test::write_text(dir.file("a.csv"), "1,2,x\n");
  test::write_text(dir.file("b.csv"), "1,3,x\n");
  const std::string fa = file_fingerprint(dir.file("a.csv"));
  EXPECT_EQ(fa.size(), 64u);
  EXPECT_NE(fa, file_fingerprint(dir.file("b.csv")));
  const std::string path = dir.file("ledger.tsv");
  BudgetLedger a(path, fa, 1.0);
  EXPECT_EQ(a.spent(), 0.0);
  for (int i = 0; i < 10; ++i) a.charge(spend(0.1), DpUnit::Paper, "run");  // exactly fills 1.0
  EXPECT_NEAR(a.spent(), 1.0, 1e-12);
  try {
    a.charge(spend(0.05), DpUnit::Record, "one too many");
    FAIL() << "the release beyond the budget was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("DP budget exceeded"), std::string::npos) << e.what();
  }
  EXPECT_EQ(a.entries().size(), 10u);  // the refused release was not recorded
  // Another data set in the same ledger has its own budget.
  BudgetLedger b(path, file_fingerprint(dir.file("b.csv")), 1.0);
  EXPECT_EQ(b.spent(), 0.0);
  b.charge(spend(0.5), DpUnit::Record, "tab\there");
  const auto entries = b.entries();
  ASSERT_EQ(entries.size(), 11u);
  EXPECT_EQ(entries.back().unit, "record");
  EXPECT_EQ(entries.back().note, "tab here");
  EXPECT_EQ(entries.back().parties, 4u);
  EXPECT_THROW(BudgetLedger(path, fa, 0), Error);
}

TEST(BudgetLedger, MalformedLineIsNamed) {
  test::TempDir dir;
  test::write_text(dir.file("l.tsv"), "# comment\nabc\t2026\tnot-a-number\tpaper\t1\t2\n");
  BudgetLedger l(dir.file("l.tsv"), "abc", 1.0);
  try {
    l.spent();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("l.tsv:2"), std::string::npos) << e.what();
  }
}

TEST(DpUnit, RecordUnitSpendsTheWholeEpsilonPerParty) {
  const DpMechanism paper(DpParams{1.0, 10, DpExponent::Paper, DpUnit::Paper}, 4);
  const DpMechanism record(DpParams{1.0, 10, DpExponent::Paper, DpUnit::Record}, 4);
  EXPECT_DOUBLE_EQ(paper.epsilon_party, 0.25);
  EXPECT_DOUBLE_EQ(record.epsilon_party, 1.0);
  // τ× less noise: b = 2T/ε' = 80 (paper) vs 20 (record).
  EXPECT_DOUBLE_EQ(paper.noise_scale.to_double(), 80.0);
  EXPECT_DOUBLE_EQ(record.noise_scale.to_double(), 20.0);
  EXPECT_NEAR(account(paper).total, 1.0, 1e-12);
  EXPECT_NEAR(account(record).total, 1.0, 1e-12);    // parallel composition
  EXPECT_NEAR(account(record).per_party, 1.0, 1e-12);
  EXPECT_EQ(parse_dp_unit("record"), DpUnit::Record);
  EXPECT_THROW(parse_dp_unit("row"), Error);
}

}  // namespace
}  // namespace flynn::federated
