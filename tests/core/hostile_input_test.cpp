// Hostile inputs that the loaders must refuse cheaply: each ends in a clear
// error naming the cause, in bounded time and memory.
#include <gtest/gtest.h>

#include <string>

#include "flynn/io/loaders.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace {

using flynn::test::contains;
using flynn::test::error_of;
using flynn::test::TempDir;
using flynn::test::write_text;

TEST(HostileInput, TinyLibsvmFileWithAHugeIndex) {
  // 24 bytes that used to allocate 2.7 GB.
  TempDir dir;
  write_text(dir.file("x.svm"), "2 268435456:1\n");
  EXPECT_TRUE(contains(error_of([&] { flynn::io::load_dataset(dir.file("x.svm")); }),
                       {"x.svm", "268435456 features is too large to load"}));
}

TEST(HostileInput, SparseArffDeclaringManyAttributes) {
  // 200000 declared attributes and two sparse rows: 400000 dense values is beyond the
  // automatic limit for this input only when the limit is small, so check the rule with an
  // explicit lower one and the automatic limit's formula.
  std::string text = "@relation r\n";
  for (int i = 0; i < 200000; ++i) text += "@attribute a" + std::to_string(i) + " numeric\n";
  text += "@attribute class {x,y}\n@data\n{0 1, 200000 x}\n{1 1, 200000 y}\n";
  flynn::io::LoadOptions o;
  o.max_values = 300000;
  EXPECT_TRUE(contains(error_of([&] { flynn::io::parse_arff(text, o, "wide.arff"); }),
                       {"wide.arff", "too large to load"}));
  EXPECT_EQ(flynn::io::sparse_value_limit(1000), (std::uint64_t{1} << 26) + 1000);
  const auto ds = flynn::io::parse_arff(text, {}, "wide.arff");  // 400000 < 2^26 + size
  EXPECT_EQ(ds.n_rows, 2u);
}

TEST(HostileInput, EndlessAndBombInputsStopAtTheSizeLimit) {
  flynn::io::LoadOptions o;
  o.max_input_bytes = 1u << 20;
  o.format = flynn::io::Format::Csv;
  EXPECT_TRUE(contains(error_of([&] { flynn::io::load_dataset("/dev/zero", o); }),
                       {"/dev/zero", "input size limit"}));
}

TEST(HostileInput, LabelsThatNoModelCouldHold) {
  EXPECT_FALSE(error_of([] { flynn::io::parse_csv(std::string("1,a\n2,\x01\n", 8), {}, "c.csv"); }).empty());
  const std::string long_label(70000, 'x');
  EXPECT_TRUE(contains(error_of([&] { flynn::io::parse_csv("1," + long_label + "\n2,b\n", {}, "c.csv"); }),
                       {"bytes long"}));
}

}  // namespace
