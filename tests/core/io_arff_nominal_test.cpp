// ARFF nominal and string attributes as features: one-hot encoded exactly like
// CSV text columns, so that an ARFF file and the same table as CSV give the same rows, the
// same schema; '?' under --missing; sparse rows with nominal values; streaming equal to
// whole-file loading. The same files through the CLI: tests/cli/arff_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "flynn/io/loaders.hpp"
#include "flynn/io/row_stream.hpp"
#include "core/io/table_encoder.hpp"
#include "arff_csv_pairs.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace {

using flynn::Dataset;
using flynn::MissingPolicy;
using flynn::TableSchema;
using flynn::io::LoadOptions;
using flynn::test::contains;
using flynn::test::error_of;
using flynn::test::Fixture;
using flynn::test::fixtures;

Dataset arff(const std::string& text, const LoadOptions& o = {}) {
  return flynn::io::parse_arff(text, o, "t.arff");
}
Dataset csv(const std::string& text, const LoadOptions& o = {}) {
  return flynn::io::parse_csv(text, o, "t.csv");
}
std::string arff_error(const std::string& text, const LoadOptions& o = {}) {
  return error_of([&] { arff(text, o); });
}

// Everything the two loaders must agree on.
void expect_same(const Dataset& a, const Dataset& c) {
  EXPECT_EQ(a.n_rows, c.n_rows);
  EXPECT_EQ(a.n_features, c.n_features);
  EXPECT_EQ(a.features, c.features);
  EXPECT_EQ(a.has_labels, c.has_labels);
  EXPECT_EQ(a.labels, c.labels);
  EXPECT_EQ(a.classes.joined(), c.classes.joined());
  EXPECT_EQ(a.schema, c.schema);
}

TEST(IoArffNominal, CommonShapesLoadLikeTheEquivalentCsv) {
  for (const Fixture& f : fixtures()) {
    SCOPED_TRACE(f.name);
    for (MissingPolicy p : {MissingPolicy::Mean, MissingPolicy::Zero}) {
      LoadOptions o;
      o.missing = p;
      expect_same(arff(f.arff, o), csv(f.csv, o));
    }
  }
}

TEST(IoArffNominal, NominalColumnsAreOneHotInDeclaredOrder) {
  const Dataset d = arff(
      "@relation r\n@attribute colour {red,green,blue}\n@attribute x numeric\n"
      "@attribute class {a,b}\n@data\nblue,1,a\nred,2,b\ngreen,3,a\n");
  EXPECT_EQ(d.n_features, 4u);
  ASSERT_EQ(d.schema.columns.size(), 2u);
  // The declared order, not the sorted one: the header is the authority.
  EXPECT_EQ(d.schema.columns[0].categories, (std::vector<std::string>{"red", "green", "blue"}));
  EXPECT_EQ(d.schema.columns[0].name, "colour");
  EXPECT_EQ(d.schema.label_name, "class");
  EXPECT_EQ(d.features, (std::vector<float>{0, 0, 1, 1, 1, 0, 0, 2, 0, 1, 0, 3}));
}

TEST(IoArffNominal, ADeclaredValueNeverSeenKeepsItsOwnColumn) {
  // 'purple' is declared but no row holds it: its one-hot feature is there, always 0, so
  // that a later file holding it encodes into the same model columns.
  const Dataset d = arff(
      "@relation r\n@attribute colour {blue,purple,red}\n@attribute class {a,b}\n@data\n"
      "blue,a\nred,b\n");
  EXPECT_EQ(d.n_features, 3u);
  EXPECT_EQ(d.schema.columns[0].categories, (std::vector<std::string>{"blue", "purple", "red"}));
  EXPECT_EQ(d.features, (std::vector<float>{1, 0, 0, 0, 0, 1}));
}

TEST(IoArffNominal, MissingValuesFollowThePolicyAsInCsv) {
  const std::string text =
      "@relation r\n@attribute colour {blue,red}\n@attribute x numeric\n@attribute class {a,b}\n"
      "@data\n?,1,a\nred,?,b\nblue,3,a\n";
  // Mean (default): a missing category is an all-zero block, a missing number the mean.
  const Dataset mean = arff(text);
  EXPECT_EQ(mean.features, (std::vector<float>{0, 0, 1, 0, 1, 2, 1, 0, 3}));
  ASSERT_EQ(mean.schema.fill.size(), 3u);
  LoadOptions zero;
  zero.missing = MissingPolicy::Zero;
  EXPECT_EQ(arff(text, zero).features, (std::vector<float>{0, 0, 1, 0, 1, 0, 1, 0, 3}));
  LoadOptions strict;
  strict.missing = MissingPolicy::Error;
  EXPECT_TRUE(contains(arff_error(text, strict),
                       {"t.arff:6:1: missing value '?' for attribute 'colour'", "--missing"}));
}

TEST(IoArffNominal, UndeclaredValueIsAnErrorNamingTheCell) {
  EXPECT_TRUE(contains(
      arff_error("@relation r\n@attribute colour {blue,red}\n@attribute class {a,b}\n@data\n"
                 "blue,a\ngreen,b\n"),
      {"t.arff:6:1: value 'green' is not declared for attribute 'colour' {blue,red}"}));
  // In a sparse row: the entry's position.
  EXPECT_TRUE(contains(
      arff_error("@relation r\n@attribute x numeric\n@attribute colour {blue,red}\n"
                 "@attribute class {a,b}\n@data\n{0 1, 1 green, 2 a}\n"),
      {"t.arff:6:2: value 'green' is not declared"}));
}

TEST(IoArffNominal, SparseRowsOmitANominalValueMeaningItsFirstDeclaredValue) {
  // Sparse ARFF stores a nominal value as its index in the declared list and omits the
  // zeros, so an omitted nominal attribute holds its first declared value (Weka's
  // SparseInstance); an omitted numeric one is 0.
  const std::string head =
      "@relation r\n@attribute x numeric\n@attribute colour {blue,red,green}\n"
      "@attribute class {a,b}\n@data\n";
  const Dataset sparse = arff(head + "{0 2, 1 red, 2 a}\n{2 b}\n{1 ?, 2 a}\n{0 1, 1 blue, 2 b}\n");
  const Dataset dense = arff(head + "2,red,a\n0,blue,b\n0,?,a\n1,blue,b\n");
  expect_same(sparse, dense);
  EXPECT_EQ(sparse.features, (std::vector<float>{2, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0}));
}

TEST(IoArffNominal, StringAttributesAreTextColumnsAsInCsv) {
  // Categories come from the rows (sorted), as for a CSV text column; a string attribute
  // holding only numbers is numeric, as a CSV column would be.
  const std::string text =
      "@relation r\n@attribute city string\n@attribute code string\n@attribute class {a,b}\n"
      "@data\n'New York',10,a\nParis,20,b\n'New York',30,a\n?,40,b\n";
  const std::string table = "city,code,class\nNew York,10,a\nParis,20,b\nNew York,30,a\n?,40,b\n";
  expect_same(arff(text), csv(table));
  const Dataset d = arff(text);
  EXPECT_EQ(d.schema.columns[0].categories, (std::vector<std::string>{"New York", "Paris"}));
  EXPECT_FALSE(d.schema.columns[1].categorical());
  // A string attribute mixing numbers and text is refused like such a CSV column.
  EXPECT_TRUE(contains(
      arff_error("@relation r\n@attribute s string\n@attribute class {a,b}\n@data\n1,a\nx,b\n"),
      {"t.arff:6:1: 'x' is not a number"}));
  // Sparse rows must give string attributes (an omitted string has no defined value).
  EXPECT_TRUE(contains(
      arff_error("@relation r\n@attribute x numeric\n@attribute s string\n@attribute class {a,b}\n"
                 "@data\n{0 1, 1 p, 2 a}\n{0 2, 2 b}\n"),
      {"t.arff:7: sparse row omits the string attribute 's'"}));
}

TEST(IoArffNominal, OneHotSizeOfStringAttributesIsBoundedAsInCsv) {
  // 40 string attributes of 50 values each: 2000 features per row, 400000 values. The
  // bound is CSV's (the same two-pass reader): checked once the categories are learned,
  // before a row is encoded.
  std::string text = "@relation r\n";
  for (int c = 0; c < 40; ++c) text += "@attribute s" + std::to_string(c) + " string\n";
  text += "@attribute class {a,b}\n@data\n";
  for (int r = 0; r < 200; ++r) {
    for (int c = 0; c < 40; ++c) {
      text += 'v';
      text += std::to_string((r + c) % 50);
      text += ',';
    }
    text += (r % 2 ? "a\n" : "b\n");
  }
  LoadOptions o;
  o.max_values = 100000;
  EXPECT_TRUE(contains(arff_error(text, o),
                       {"t.arff: 200 rows x 2000 features after one-hot encoding the text columns is too large",
                        "--ignore-cols"}));
  EXPECT_EQ(arff(text).n_features, 2000u);  // within the default bound for its size
}

TEST(IoArffNominal, DateAndRelationalFeaturesAreRefusedByName) {
  EXPECT_TRUE(contains(
      arff_error("@relation r\n@attribute when date 'yyyy-MM-dd'\n@attribute class {a,b}\n@data\n"
                 "2020-01-01,a\n"),
      {"t.arff:2:", "attribute 'when' is date", "cannot be features"}));
  EXPECT_TRUE(contains(arff_error("@relation r\n@attribute bag relational\n"),
                       {"t.arff:2:", "'bag' is relational"}));
}

TEST(IoArffNominal, TooManyDeclaredValuesIsRefusedLikeCsv) {
  std::string values;
  for (int i = 0; i < 300; ++i) values += (i ? ",v" : "v") + std::to_string(i);
  EXPECT_TRUE(contains(
      arff_error("@relation r\n@attribute zip {" + values + "}\n@attribute class {a,b}\n@data\nv1,a\n"),
      {"t.arff:2:", "'zip' declares 300 values", "256"}));
}

TEST(IoArffNominal, PredictionEncodesWithTheModelsCategories) {
  const Dataset train = arff(
      "@relation r\n@attribute colour {blue,red}\n@attribute x numeric\n@attribute class {a,b}\n"
      "@data\nblue,1,a\nred,?,b\n");
  LoadOptions p;
  p.schema = &train.schema;
  p.expected_features = train.n_features;
  // Same header: the same encoding; the means fill '?'.
  const Dataset same = arff(
      "@relation r\n@attribute colour {blue,red}\n@attribute x numeric\n@attribute class {a,b}\n"
      "@data\nred,?,a\n", p);
  EXPECT_EQ(same.features, (std::vector<float>{0, 1, 1}));
  // A test file declaring a value the model never saw: an all-zero block, as for an
  // unseen CSV category; unlabelled rows too.
  const Dataset unseen = arff(
      "@relation r\n@attribute colour {blue,green,red}\n@attribute x numeric\n@data\ngreen,5\n", p);
  EXPECT_FALSE(unseen.has_labels);
  EXPECT_EQ(unseen.features, (std::vector<float>{0, 0, 5}));
  // CSV with the same column names, in another order: the same features.
  const Dataset from_csv = csv("x,class,colour\n5,a,red\n", p);
  EXPECT_EQ(from_csv.features, (std::vector<float>{0, 1, 5}));
  // A nominal attribute where the model has a number is refused at the header.
  const Dataset numeric = arff("@relation r\n@attribute x numeric\n@attribute class {a,b}\n@data\n1,a\n");
  LoadOptions q;
  q.schema = &numeric.schema;
  q.expected_features = 1;
  EXPECT_TRUE(contains(
      arff_error("@relation r\n@attribute x {p,q}\n@attribute class {a,b}\n@data\np,a\n", q),
      {"t.arff:2:", "attribute 'x' is nominal, where the model has a numeric feature"}));
}

// ---- streaming ---------------------------------------------------------------------------

TEST(IoArffNominal, RowStreamChunksEqualTheWholeFile) {
  flynn::test::TempDir dir;
  int n = 0;
  for (const Fixture& f : fixtures()) {
    const std::string path = dir.file("f" + std::to_string(n++) + ".arff");
    const std::string sparse_path = dir.file("s" + std::to_string(n) + ".arff");
    flynn::test::write_text(path, f.arff);
    flynn::test::write_text(sparse_path,
                            "@relation r\n@attribute x numeric\n@attribute c {p,q,r}\n"
                            "@attribute class {a,b}\n@data\n{0 1, 1 q, 2 a}\n{2 b}\n{1 ?, 2 a}\n");
    for (const std::string& p : {path, sparse_path}) {
      const Dataset all = flynn::io::load_dataset(p);
      for (std::size_t rows : {1u, 2u, 1000u})
        for (std::size_t block : {1u, 16u, 1u << 20}) {
          flynn::io::ChunkLimits limits;
          limits.max_rows = rows;
          limits.block_bytes = block;
          flynn::io::RowStream stream(p, {}, limits);
          EXPECT_EQ(stream.n_features(), all.n_features);
          Dataset chunk;
          std::vector<float> features;
          std::vector<std::string> labels;
          while (stream.next(chunk)) {
            features.insert(features.end(), chunk.features.begin(), chunk.features.end());
            for (auto id : chunk.labels) labels.push_back(chunk.classes.name(id));
            // Each chunk carries the file's schema (before the means are known).
            EXPECT_EQ(chunk.schema.columns, all.schema.columns);
          }
          // Missing numbers are NaN in chunks (the caller fills them with the file's
          // means, as flynn train does); compare the rest, and the filled ones by hand.
          ASSERT_EQ(features.size(), all.features.size()) << p;
          for (std::size_t i = 0; i < features.size(); ++i) {
            if (std::isnan(features[i]))
              EXPECT_EQ(all.features[i], all.schema.fill.at(i % all.n_features)) << p << " " << i;
            else
              EXPECT_EQ(features[i], all.features[i]) << p << " " << i;
          }
          std::vector<std::string> expected;
          for (auto id : all.labels) expected.push_back(all.classes.name(id));
          EXPECT_EQ(labels, expected) << p;
        }
    }
  }
}

TEST(IoArffNominal, RowStreamLeavesStringAttributesToTheLearningPass) {
  // As for a CSV text column: streaming training cannot encode a text value before its
  // categories are known, and says so with TextInNumericColumn (flynn train then loads
  // the file whole).
  flynn::test::TempDir dir;
  const std::string path = dir.file("s.arff");
  flynn::test::write_text(path, "@relation r\n@attribute s string\n@attribute class {a,b}\n@data\nx,a\ny,b\n");
  flynn::io::RowStream stream(path);
  Dataset chunk;
  EXPECT_THROW(stream.next(chunk), flynn::io::detail::TextInNumericColumn);
}

}  // namespace
