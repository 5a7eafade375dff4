// CSV loader: dialects, header detection, label columns, expected_features, errors.
#include <gtest/gtest.h>

#include <cmath>

#include "flynn/io/loaders.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace {

using flynn::Dataset;
using flynn::io::LabelColumn;
using flynn::io::LoadOptions;
using flynn::test::contains;
using flynn::test::error_of;

Dataset csv(std::string_view text, const LoadOptions& o = {}) {
  return flynn::io::parse_csv(text, o, "data.csv");
}

std::string csv_error(std::string_view text, const LoadOptions& o = {}) {
  return error_of([&] { csv(text, o); });
}

std::vector<std::string> label_names(const Dataset& d) {
  std::vector<std::string> r;
  for (auto l : d.labels) r.push_back(d.classes.name(l));
  return r;
}

LoadOptions label_at(LabelColumn::Kind kind, long index = 0, std::string name = {}) {
  LoadOptions o;
  o.label_column.kind = kind;
  o.label_column.index = index;
  o.label_column.name = std::move(name);
  return o;
}

TEST(IoCsv, PlainNoHeaderLabelLast) {
  const Dataset d = csv("1,2,b\n3,4.5,a\n-1,0,b\n");
  EXPECT_EQ(d.source, "data.csv");
  EXPECT_EQ(d.n_rows, 3u);
  EXPECT_EQ(d.n_features, 2u);
  EXPECT_EQ(d.features, (std::vector<float>{1, 2, 3, 4.5f, -1, 0}));
  ASSERT_TRUE(d.has_labels);
  EXPECT_EQ(d.classes.joined(), "a,b");
  EXPECT_EQ(d.labels, (std::vector<std::uint32_t>{1, 0, 1}));
  EXPECT_EQ(d.row_origin, (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST(IoCsv, HeaderDetectedWhenAFeatureNameIsText) {
  const Dataset d = csv("x,y,class\n1,2,1\n3,4,2\n");
  EXPECT_EQ(d.n_rows, 2u);
  EXPECT_EQ(d.row_origin, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(d.classes.joined(), "1,2");
}

TEST(IoCsv, HeaderDetectionWhenOnlyTheLabelFieldIsText) {
  // Numeric feature names, text label name, numeric labels below: a header.
  EXPECT_EQ(csv("1,2,class\n5,6,0\n7,8,1\n").n_rows, 2u);
  // Text labels everywhere: line 1 is data.
  const Dataset d = csv("1,2,cat\n5,6,dog\n");
  EXPECT_EQ(d.n_rows, 2u);
  EXPECT_EQ(d.classes.joined(), "cat,dog");
}

TEST(IoCsv, ExplicitHeaderChoice) {
  LoadOptions yes;
  yes.header = LoadOptions::Header::Yes;
  EXPECT_EQ(csv("1,2,0\n3,4,1\n5,6,1\n", yes).n_rows, 2u);
  LoadOptions no;
  no.header = LoadOptions::Header::No;
  EXPECT_TRUE(contains(csv_error("x,y,c\n1,2,0\n", no), {"data.csv:1:1: 'x' is not a number"}));
}

TEST(IoCsv, NanOnLineOneIsAMissingValueNotAHeader) {
  // "nan" is a missing cell (LoadOptions::missing): filled with the mean by default.
  const Dataset d = csv("1,nan,0\n1,2,1\n");
  EXPECT_EQ(d.n_rows, 2u);
  EXPECT_EQ(d.features, (std::vector<float>{1, 2, 1, 2}));
  LoadOptions strict;
  strict.missing = flynn::MissingPolicy::Error;
  EXPECT_TRUE(contains(csv_error("1,nan,0\n1,2,1\n", strict), {"data.csv:1:2: missing value 'nan'"}));
}

TEST(IoCsv, DelimiterDetection) {
  const Dataset semi = csv("1;2;a\n3;4;b\n");
  EXPECT_EQ(semi.n_features, 2u);
  const Dataset tab = csv("1\t2\ta\n3\t4\tb\n");
  EXPECT_EQ(tab.n_features, 2u);
  EXPECT_EQ(tab.features, (std::vector<float>{1, 2, 3, 4}));
  // Commas inside quotes do not count.
  const Dataset q = csv("\"a,b,c\";1;2\n\"d,e\";3;4\n", label_at(LabelColumn::Kind::Index, 1));
  EXPECT_EQ(q.classes.joined(), "a,b,c,d,e");
  EXPECT_EQ(q.features, (std::vector<float>{1, 2, 3, 4}));
}

TEST(IoCsv, ExplicitDelimiter) {
  LoadOptions o;
  o.delimiter = ';';
  // ',' is more frequent on line 1 but ';' was asked for.
  const Dataset d = csv("1;2;a,b,c,d\n3;4;e\n", o);
  EXPECT_EQ(d.n_features, 2u);
  EXPECT_EQ(d.classes.joined(), "a,b,c,d,e");
  EXPECT_EQ(d.classes.size(), 2u);
}

TEST(IoCsv, TabDelimitedKeepsEmptyFieldsAndReportsThem) {
  LoadOptions strict;
  strict.missing = flynn::MissingPolicy::Error;
  EXPECT_TRUE(contains(csv_error("1\t2\ta\n3\t\tb\n", strict), {"data.csv:2:2: missing value ''"}));
}

TEST(IoCsv, CrlfBomWhitespaceAndTrailingEmptyLines) {
  const Dataset d =
      csv("\xEF\xBB\xBF"
          " a , b ,label\r\n 1 , 2 , x \r\n3,4,y\r\n\r\n\n");
  EXPECT_EQ(d.n_rows, 2u);
  EXPECT_EQ(d.features, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(label_names(d), (std::vector<std::string>{"x", "y"}));
}

TEST(IoCsv, BlankLinesInTheMiddleAreSkippedAndLineNumbersKept) {
  const Dataset d = csv("1,2,a\n\n   \n3,4,b\n");
  EXPECT_EQ(d.n_rows, 2u);
  EXPECT_EQ(d.row_origin, (std::vector<std::uint64_t>{1, 4}));
  EXPECT_TRUE(contains(csv_error("1,2,a\n\n3,x,b\n"), {"data.csv:3:2: 'x' is not a number"}));
}

TEST(IoCsv, QuotedFields) {
  const Dataset d =
      csv("\"f1\",\"f2\",\"class\"\n\"1.5\", 2 ,\"cat\"\n3,4,\"\"\"dog\"\"\"\n5,6,\" a, b \"\n");
  EXPECT_EQ(d.n_rows, 3u);
  EXPECT_EQ(d.features, (std::vector<float>{1.5f, 2, 3, 4, 5, 6}));
  EXPECT_EQ(label_names(d), (std::vector<std::string>{"cat", "\"dog\"", " a, b "}));
}

TEST(IoCsv, QuoteErrors) {
  EXPECT_TRUE(contains(csv_error("1,2,\"abc\n"), {"data.csv:1:3:", "unterminated quoted field"}));
  EXPECT_TRUE(contains(csv_error("1,2,\"a\"b\n"), {"data.csv:1:3:", "after a closing quote"}));
}

TEST(IoCsv, LabelColumnChoices) {
  const std::string text = "a,b,c\n1,2,3\n4,5,6\n";
  const Dataset first = csv(text, label_at(LabelColumn::Kind::Index, 1));
  EXPECT_EQ(first.classes.joined(), "1,4");
  EXPECT_EQ(first.features, (std::vector<float>{2, 3, 5, 6}));
  const Dataset second_last = csv(text, label_at(LabelColumn::Kind::Index, -2));
  EXPECT_EQ(second_last.classes.joined(), "2,5");
  EXPECT_EQ(second_last.features, (std::vector<float>{1, 3, 4, 6}));
  const Dataset by_name = csv(text, label_at(LabelColumn::Kind::Name, 0, "b"));
  EXPECT_EQ(by_name.classes.joined(), "2,5");
  const Dataset none = csv(text, label_at(LabelColumn::Kind::None));
  EXPECT_FALSE(none.has_labels);
  EXPECT_EQ(none.n_features, 3u);
  EXPECT_TRUE(none.labels.empty());
  EXPECT_TRUE(none.classes.empty());
}

TEST(IoCsv, LabelColumnErrors) {
  EXPECT_TRUE(contains(csv_error("1,2,3\n", label_at(LabelColumn::Kind::Index, 4)),
                       {"data.csv:1:", "label column 4 is out of range (3 columns)"}));
  EXPECT_TRUE(
      contains(csv_error("1,2,3\n", label_at(LabelColumn::Kind::Index, -4)), {"out of range"}));
  EXPECT_TRUE(contains(csv_error("a,b\n1,2\n", label_at(LabelColumn::Kind::Name, 0, "zz")),
                       {"data.csv:1:", "no column named 'zz'"}));
  EXPECT_TRUE(contains(csv_error("a,a,b\n1,2,3\n", label_at(LabelColumn::Kind::Name, 0, "a")),
                       {"appears 2 times"}));
  LoadOptions o = label_at(LabelColumn::Kind::Name, 0, "a");
  o.header = LoadOptions::Header::No;
  EXPECT_TRUE(contains(csv_error("a,b\n1,2\n", o), {"data.csv:", "without a header"}));
  EXPECT_TRUE(contains(csv_error("1\n2\n"), {"data.csv:1:", "1 column"}));
  EXPECT_TRUE(contains(csv_error("1,,3\n", label_at(LabelColumn::Kind::Index, 2)),
                       {"data.csv:1:2: empty label"}));
}

TEST(IoCsv, SingleColumnUnlabelled) {
  const Dataset d = csv("1\n2\n", label_at(LabelColumn::Kind::None));
  EXPECT_EQ(d.n_rows, 2u);
  EXPECT_EQ(d.n_features, 1u);
}

TEST(IoCsv, ErrorMessagesNameFileLineAndColumn) {
  EXPECT_TRUE(contains(csv_error("1,2,a\n3,abc,b\n"), {"data.csv:2:2: 'abc' is not a number"}));
  EXPECT_TRUE(contains(csv_error("1,2,a\n3,4,b\n5,6,7,c\n"),
                       {"data.csv:3: 4 fields, expected 3 (ragged row)"}));
  EXPECT_TRUE(
      contains(csv_error("1,2,a\n3,b\n"), {"data.csv:2: 2 fields, expected 3 (ragged row)"}));
  LoadOptions strict;
  strict.missing = flynn::MissingPolicy::Error;
  EXPECT_TRUE(contains(csv_error("1,2,a\n3,NaN,b\n", strict), {"data.csv:2:2: missing value 'NaN'"}));
  EXPECT_TRUE(
      contains(csv_error("1,2,a\n-inf,1,b\n"), {"data.csv:2:1: infinity ('-inf') is not allowed"}));
  EXPECT_TRUE(
      contains(csv_error("1,2,a\n1e39,1,b\n"), {"data.csv:2:1: '1e39' is out of float range"}));
  EXPECT_TRUE(contains(csv_error("1,2,a\n1,,b\n", strict), {"data.csv:2:2: missing value ''"}));
}

TEST(IoCsv, EmptyFileAndHeaderOnly) {
  EXPECT_TRUE(contains(csv_error(""), {"data.csv: empty file"}));
  EXPECT_TRUE(contains(csv_error("\n  \n\r\n"), {"data.csv: empty file"}));
  EXPECT_TRUE(contains(csv_error("\xEF\xBB\xBF"), {"data.csv: empty file"}));
  EXPECT_TRUE(contains(csv_error("a,b,class\n"), {"data.csv: no data rows"}));
}

TEST(IoCsv, NegativeZeroStoredAsPositiveZero) {
  const Dataset d = csv("-0,-0.0,a\n1,2,b\n");
  EXPECT_FALSE(std::signbit(d.features[0]));
  EXPECT_FALSE(std::signbit(d.features[1]));
}

TEST(IoCsv, NumericLabelsSortNumerically) {
  const Dataset d = csv("1,10\n2,2\n3,-1\n4,2\n");
  EXPECT_EQ(d.classes.joined(), "-1,2,10");
  EXPECT_EQ(d.labels, (std::vector<std::uint32_t>{2, 1, 0, 1}));
}

TEST(IoCsv, ExpectedFeatures) {
  LoadOptions o;
  o.expected_features = 2;
  const Dataset unlabelled = csv("1,2\n3,4\n", o);
  EXPECT_FALSE(unlabelled.has_labels);
  EXPECT_EQ(unlabelled.n_features, 2u);
  const Dataset labelled = csv("1,2,a\n3,4,b\n", o);
  EXPECT_TRUE(labelled.has_labels);
  EXPECT_EQ(labelled.n_features, 2u);
  // A header is still detected when unlabelled.
  EXPECT_EQ(csv("x,y\n1,2\n", o).n_rows, 1u);
  EXPECT_TRUE(
      contains(csv_error("1,2,3,4\n", o),
               {"data.csv:1: 4 columns, model expects 2 features (or 3 with a label column)"}));
  EXPECT_TRUE(contains(csv_error("1\n", o), {"1 columns, model expects 2 features"}));

  LoadOptions idx = label_at(LabelColumn::Kind::Index, 1);
  idx.expected_features = 2;
  EXPECT_TRUE(contains(csv_error("1,2\n", idx), {"data.csv:1:", "no room for the label column"}));
  EXPECT_EQ(csv("a,1,2\n", idx).classes.joined(), "a");

  LoadOptions none = label_at(LabelColumn::Kind::None);
  none.expected_features = 2;
  EXPECT_TRUE(contains(csv_error("1,2,3\n", none), {"3 columns, model expects 2 features"}));
  EXPECT_FALSE(csv("1,2\n", none).has_labels);
}

TEST(IoCsv, LoadsGzipThroughLoadDataset) {
  flynn::test::TempDir dir;
  const std::string text = "f1,f2,class\n1,2,a\n3,4,b\n";
  flynn::test::write_text(dir.file("d.csv.gz"), flynn::test::gzip_bytes(text));
  flynn::test::write_text(dir.file("d.csv"), text);
  const Dataset gz = flynn::io::load_dataset(dir.file("d.csv.gz"));
  const Dataset plain = flynn::io::load_dataset(dir.file("d.csv"));
  EXPECT_EQ(gz.features, plain.features);
  EXPECT_EQ(gz.labels, plain.labels);
  EXPECT_EQ(gz.source, dir.file("d.csv.gz"));
  // Errors name the file as given.
  flynn::test::write_text(dir.file("bad.csv.gz"), flynn::test::gzip_bytes("1,2,a\n3,x,b\n"));
  EXPECT_TRUE(contains(error_of([&] { flynn::io::load_dataset(dir.file("bad.csv.gz")); }),
                       {dir.file("bad.csv.gz") + ":2:2: 'x' is not a number"}));
}

TEST(IoCsv, LargeFileParsesQuickly) {
  // 20000 × 100 values: a smoke test of the fast path (no per-field allocation).
  std::string text;
  text.reserve(20000 * 100 * 4);
  for (int r = 0; r < 20000; ++r) {
    for (int c = 0; c < 100; ++c) {
      text += std::to_string((r * 31 + c * 7) % 256);
      text += ',';
    }
    text += (r % 3 == 0) ? "x\n" : "y\n";
  }
  const Dataset d = csv(text);
  EXPECT_EQ(d.n_rows, 20000u);
  EXPECT_EQ(d.n_features, 100u);
  EXPECT_EQ(d.features[100 * 5 + 3], static_cast<float>((5 * 31 + 3 * 7) % 256));
}

}  // namespace
