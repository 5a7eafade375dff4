// CSV cells of flynn's own outputs: quoting and splitting round-trip.
#include <gtest/gtest.h>

#include "flynn/detail/csv_cells.hpp"

namespace flynn::detail {
namespace {

TEST(IoCsvCells, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field(""), "");
}

TEST(IoCsvCells, SplitUndoesQuoting) {
  EXPECT_EQ(csv_split("x,\"a,b\",\"q\"\"q\",,z"),
            (std::vector<std::string>{"x", "a,b", "q\"q", "", "z"}));
  EXPECT_EQ(csv_split("a,b\r"), (std::vector<std::string>{"a", "b"}));
  const std::vector<std::string> cells = {"p_cat, dog", "\"", "plain", ""};
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    line += csv_field(cells[i]);  // appended, not "," + string&& (GCC 12 -Wrestrict misfires)
  }
  EXPECT_EQ(csv_split(line), cells);
}

}  // namespace
}  // namespace flynn::detail
