// flynn/value_parsing.hpp: byte sizes and the strict integer rule behind the CLI's options.
#include "flynn/value_parsing.hpp"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "flynn/error.hpp"

namespace {

TEST(ValueParsing, ByteSizeUnitsAreBinaryAndCaseInsensitive) {
  EXPECT_EQ(flynn::parse_byte_size("123", "--f"), 123u);
  EXPECT_EQ(flynn::parse_byte_size("64K", "--f"), std::uint64_t{64} << 10);
  EXPECT_EQ(flynn::parse_byte_size("64m", "--f"), std::uint64_t{64} << 20);
  EXPECT_EQ(flynn::parse_byte_size("4GiB", "--f"), std::uint64_t{4} << 30);
  EXPECT_EQ(flynn::parse_byte_size("1TB", "--f"), std::uint64_t{1} << 40);
  EXPECT_EQ(flynn::parse_byte_size("7B", "--f"), 7u);
}

TEST(ValueParsing, ByteSizeRefusesWhatIsNotASizeNamingTheFlag) {
  for (const std::string bad : {"", "K", "12X", "1.5G", "-1", "64KM"}) {
    try {
      flynn::parse_byte_size(bad, "--max-input-bytes");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const flynn::Error& e) {
      EXPECT_NE(std::string(e.what()).find("--max-input-bytes: '" + bad + "' is not a size"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(flynn::parse_byte_size("0", "--f"), flynn::Error);
  EXPECT_THROW(flynn::parse_byte_size("16777216T", "--f"), flynn::Error);             // 2^64
  EXPECT_THROW(flynn::parse_byte_size("18446744073709551616", "--f"), flynn::Error);  // 2^64
}

TEST(ValueParsing, StrictIntegerRewritesToCanonicalDecimal) {
  std::string v = "010";
  EXPECT_EQ(flynn::check_strict_integer(v, false), "");
  EXPECT_EQ(v, "10");
  v = "+7";
  EXPECT_EQ(flynn::check_strict_integer(v, false), "");
  EXPECT_EQ(v, "7");
  v = "-0";
  EXPECT_EQ(flynn::check_strict_integer(v, true), "");
  EXPECT_EQ(v, "0");
  v = "-9223372036854775808";
  EXPECT_EQ(flynn::check_strict_integer(v, true), "");
  EXPECT_EQ(v, "-9223372036854775808");
}

TEST(ValueParsing, StrictIntegerGivesTheReason) {
  std::string v = "18446744073709551616";
  EXPECT_EQ(flynn::check_strict_integer(v, false),
            "18446744073709551616 is out of range: must be in [0, 18446744073709551615]");
  v = "-1";
  EXPECT_EQ(flynn::check_strict_integer(v, false), "-1 is out of range: must be in [0, 18446744073709551615]");
  v = "9223372036854775808";
  EXPECT_EQ(flynn::check_strict_integer(v, true),
            "9223372036854775808 is out of range: must be in [-9223372036854775808, 9223372036854775807]");
  v = "0x10";
  EXPECT_EQ(flynn::check_strict_integer(v, true), "'0x10' is not a decimal integer");
  v = "";
  EXPECT_EQ(flynn::check_strict_integer(v, true), "'' is not a decimal integer");
}

}  // namespace
