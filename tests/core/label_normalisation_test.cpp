// Labels are normalised the same way in every format: one canonical spelling
// for integer-valued names, printable names only, names a model file can hold.
#include <gtest/gtest.h>

#include <string>

#include "flynn/dataset.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "io_test_helpers.hpp"

namespace {

using flynn::canonical_label;
using flynn::LabelSet;
using flynn::test::contains;
using flynn::test::error_of;

TEST(LabelNormalisation, CanonicalSpellingOfIntegerNames) {
  EXPECT_EQ(canonical_label("1"), "1");
  EXPECT_EQ(canonical_label("1.0"), "1");
  EXPECT_EQ(canonical_label("+01.000"), "1");
  EXPECT_EQ(canonical_label("-3.0"), "-3");
  EXPECT_EQ(canonical_label("-0"), "0");
  EXPECT_EQ(canonical_label("-0.0"), "0");
  EXPECT_EQ(canonical_label("007"), "7");
  EXPECT_EQ(canonical_label("0"), "0");
  // Everything else is kept as given.
  EXPECT_EQ(canonical_label("1.5"), "1.5");
  EXPECT_EQ(canonical_label("1."), "1.");
  EXPECT_EQ(canonical_label(".0"), ".0");
  EXPECT_EQ(canonical_label("1e0"), "1e0");
  EXPECT_EQ(canonical_label(" 1"), " 1");
  EXPECT_EQ(canonical_label("cat"), "cat");
  EXPECT_EQ(canonical_label("+"), "+");
  EXPECT_EQ(canonical_label("1.0x"), "1.0x");
}

TEST(LabelNormalisation, EveryFormatMapsOneValueToOneClass) {
  const auto csv = flynn::io::parse_csv("1,2,1\n3,4,1.0\n5,6,+1\n7,8,2.00\n", {}, "t.csv");
  EXPECT_EQ(csv.classes.joined(), "1,2");
  EXPECT_EQ(csv.labels, (std::vector<std::uint32_t>{0, 0, 0, 1}));
  const auto svm = flynn::io::parse_libsvm("1.0 1:1\n+1 2:1\n2 1:2\n", {}, "t.svm");
  EXPECT_EQ(svm.classes.joined(), "1,2");
  EXPECT_EQ(svm.labels, (std::vector<std::uint32_t>{0, 0, 1}));
  EXPECT_EQ(LabelSet::parse_list("1.0, 02,cat").joined(), "1,2,cat");
}

TEST(LabelNormalisation, ControlCharactersAndOversizedNamesAreRefused) {
  EXPECT_TRUE(contains(error_of([] { LabelSet(std::vector<std::string>{std::string("a\0b", 3)}); }),
                       {"control character", "byte 0"}));
  EXPECT_TRUE(contains(error_of([] { LabelSet(std::vector<std::string>{"a\tb"}); }),
                       {"control character"}));
  EXPECT_TRUE(contains(
      error_of([] { LabelSet(std::vector<std::string>{std::string(LabelSet::kMaxNameBytes + 1, 'x')}); }),
      {"bytes long"}));
  EXPECT_NO_THROW(LabelSet(std::vector<std::string>{std::string(LabelSet::kMaxNameBytes, 'x')}));
  EXPECT_FALSE(error_of([] {
                 flynn::io::parse_csv(std::string("1,2,a\n3,4,b\0c\n", 14), {}, "nul.csv");
               }).empty());
}

TEST(LabelNormalisation, OldSpellingsInAModelStillMatch) {
  // A label list written before normalisation ("1.0") accepts today's canonical data.
  flynn::Dataset data = flynn::io::parse_csv("1,2,1\n3,4,2\n", {}, "t.csv");
  const LabelSet old_model(std::vector<std::string>{"2.0", "1.0"});
  data.relabel(old_model);
  EXPECT_EQ(data.labels, (std::vector<std::uint32_t>{1, 0}));
}

}  // namespace
