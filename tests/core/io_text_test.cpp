// Shared text-scanning helpers of the loaders: number parsing, lines, labels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/io/text_scanner.hpp"
#include "io_test_helpers.hpp"

namespace {

using flynn::io::detail::NumStatus;
using flynn::io::detail::parse_float;

NumStatus status_of(const char* s) {
  float v;
  return parse_float(s, v);
}

float value_of(const char* s) {
  float v = -123.0f;
  EXPECT_EQ(parse_float(s, v), NumStatus::Ok) << s;
  return v;
}

TEST(IoText, ParsesDecimalNumbers) {
  EXPECT_EQ(value_of("0"), 0.0f);
  EXPECT_EQ(value_of("16"), 16.0f);
  EXPECT_EQ(value_of("-7"), -7.0f);
  EXPECT_EQ(value_of("+7"), 7.0f);
  EXPECT_EQ(value_of("1.5"), 1.5f);
  EXPECT_EQ(value_of(".5"), 0.5f);
  EXPECT_EQ(value_of("5."), 5.0f);
  EXPECT_EQ(value_of("-2.5e3"), -2500.0f);
  EXPECT_EQ(value_of("1E-2"), 0.01f);
  EXPECT_EQ(value_of("000123"), 123.0f);
  EXPECT_EQ(value_of("123456789"), 123456789.0f);  // fast path, rounded like the slow one
  EXPECT_EQ(value_of("1234567890123"), 1234567890123.0f);
  EXPECT_EQ(value_of("3.4028234e38"), std::numeric_limits<float>::max());
}

TEST(IoText, NegativeZeroBecomesPositiveZero) {
  for (const char* s : {"-0", "-0.0", "-0e5", "-1e-50"}) {
    const float v = value_of(s);
    EXPECT_EQ(v, 0.0f) << s;
    EXPECT_FALSE(std::signbit(v)) << s;
  }
}

TEST(IoText, UnderflowRoundsToZero) {
  EXPECT_EQ(value_of("1e-400"), 0.0f);
  EXPECT_EQ(value_of("-1e-400"), 0.0f);
  EXPECT_EQ(value_of("0.0000000000000000000000000000000000000000000000001"), 0.0f);
}

TEST(IoText, RejectsNonNumbers) {
  for (const char* s :
       {"abc", "1.5x", "1,5", "0x10", "1e", "--1", "+-1", "+", "-", ".", "1 2", " 1", "e5"}) {
    EXPECT_EQ(status_of(s), NumStatus::NotNumber) << s;
  }
  EXPECT_EQ(status_of(""), NumStatus::Empty);
}

TEST(IoText, RejectsNonFinite) {
  for (const char* s : {"nan", "NaN", "-nan", "+NAN", "nan(123)"})
    EXPECT_EQ(status_of(s), NumStatus::NaN) << s;
  for (const char* s : {"inf", "-Inf", "+INF", "infinity", "-Infinity"})
    EXPECT_EQ(status_of(s), NumStatus::Inf) << s;
  // Finite as double, infinite as float.
  for (const char* s :
       {"1e39", "-3.5e38", "1e400", "-1e400", "1000000000000000000000000000000000000000.0"}) {
    EXPECT_EQ(status_of(s), NumStatus::OutOfRange) << s;
  }
}

TEST(IoText, LineScannerHandlesCrlfBomAndMissingNewline) {
  flynn::io::detail::LineScanner sc(
      "\xEF\xBB\xBF"
      "a,b\r\n\r\nc\nd");
  std::string_view line;
  std::vector<std::pair<std::string, std::uint64_t>> got;
  while (sc.next(line)) got.emplace_back(std::string(line), sc.line_number());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].first, "a,b");
  EXPECT_EQ(got[1].first, "");
  EXPECT_EQ(got[2].first, "c");
  EXPECT_EQ(got[3].first, "d");
  EXPECT_EQ(got[3].second, 4u);
}

TEST(IoText, CanonicalInteger) {
  using flynn::io::detail::canonical_integer;
  EXPECT_EQ(canonical_integer("+1"), "1");
  EXPECT_EQ(canonical_integer("-1"), "-1");
  EXPECT_EQ(canonical_integer("007"), "7");
  EXPECT_EQ(canonical_integer("-0"), "0");
  EXPECT_EQ(canonical_integer("+000"), "0");
  EXPECT_EQ(canonical_integer("1.0"), "1.0");
  EXPECT_EQ(canonical_integer("cat"), "cat");
  EXPECT_EQ(canonical_integer("+"), "+");
}

TEST(IoText, QuotedKeepsMessagesOnOneLine) {
  using flynn::io::detail::quote_text;
  EXPECT_EQ(quote_text("abc"), "'abc'");
  EXPECT_EQ(quote_text("a\nb"), "'a\\x0ab'");
  EXPECT_EQ(quote_text(std::string(100, 'x')), "'" + std::string(40, 'x') + "...'");
}

TEST(IoText, LabelInternerSortsNumerically) {
  flynn::io::detail::LabelInterner in;
  std::vector<std::uint32_t> labels;
  for (const char* s : {"10", "2", "-1", "2", "10"}) labels.push_back(in.intern(s));
  const flynn::LabelSet set = in.finish(labels);
  EXPECT_EQ(set.joined(), "-1,2,10");
  EXPECT_EQ(labels, (std::vector<std::uint32_t>{2, 1, 0, 1, 2}));
}

}  // namespace
