// CSV header detection through the CLI: the all-text table whose header looks like data
// trains with its header taken for one, says so in one note, and equals --header yes
// (the decision itself: tests/core/io_header_decision_test.cpp).
#include <gtest/gtest.h>

#include <string>

#include "cli_support.hpp"
#include "promoters_table.hpp"
#include "test_support.hpp"

namespace {

using flynn::test::nucleotides;

TEST(HeaderDecisionCli, TrainsTheNucleotideTableWith106RowsAndTwoClassesAndANote) {
  flynn::test::TempDir dir;
  const std::string data = dir.file("promoters.csv"), model = dir.file("m.flynn");
  flynn::test::write_text(data, nucleotides(true));
  const auto r = flynn::test::run_cli("train --data " + data + " --model " + model + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("trained on 106 rows × 228 features, 2 classes"), std::string::npos) << r.out;
  // One note, once (the command reads the file more than once).
  const std::string note = "flynn: note: " + data + ": line 1 is taken for a header";
  ASSERT_NE(r.err.find(note), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(note, r.err.find(note) + 1), std::string::npos) << r.err;
  // --header yes: the same model, and nothing to note.
  const std::string yes_model = dir.file("yes.flynn");
  const auto y = flynn::test::run_cli("train --data " + data + " --model " + yes_model +
                                      " --quiet --header yes");
  ASSERT_EQ(y.exit_code, 0) << y.err;
  EXPECT_EQ(y.err, "");
  EXPECT_EQ(flynn::test::read_text(model), flynn::test::read_text(yes_model));
}

}  // namespace
