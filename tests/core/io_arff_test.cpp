// ARFF loader: header syntax, dense and sparse rows, class attribute choices, errors.
#include <gtest/gtest.h>

#include "flynn/io/loaders.hpp"
#include "io_test_helpers.hpp"
#include "test_support.hpp"

namespace {

using flynn::Dataset;
using flynn::io::LabelColumn;
using flynn::io::LoadOptions;
using flynn::test::contains;
using flynn::test::error_of;

Dataset arff(std::string_view text, const LoadOptions& o = {}) {
  return flynn::io::parse_arff(text, o, "iris.arff");
}

std::string arff_error(std::string_view text, const LoadOptions& o = {}) {
  return error_of([&] { arff(text, o); });
}

const char* kIris =
    "% A comment\n"
    "@RELATION iris\n"
    "\n"
    "@attribute 'sepal length' REAL\n"
    "@Attribute \"sepal width\" numeric\n"
    "@ATTRIBUTE petal integer\n"
    "@attribute class {Iris-setosa, 'Iris versicolor', Iris-virginica}\n"
    "\n"
    "@data\n"
    "% data comment\n"
    "5.1,3.5,1,Iris-setosa\n"
    "4.9, 3.0 ,2,'Iris versicolor'\n"
    "\n"
    "6.3,3.3,6,Iris-virginica\n";

TEST(IoArff, DenseRows) {
  const Dataset d = arff(kIris);
  EXPECT_EQ(d.source, "iris.arff");
  EXPECT_EQ(d.n_rows, 3u);
  EXPECT_EQ(d.n_features, 3u);
  EXPECT_EQ(d.features, (std::vector<float>{5.1f, 3.5f, 1, 4.9f, 3.0f, 2, 6.3f, 3.3f, 6}));
  ASSERT_TRUE(d.has_labels);
  EXPECT_EQ(d.classes.joined(), "Iris versicolor,Iris-setosa,Iris-virginica");
  EXPECT_EQ(d.labels, (std::vector<std::uint32_t>{1, 0, 2}));
  EXPECT_EQ(d.row_origin, (std::vector<std::uint64_t>{11, 12, 14}));
}

TEST(IoArff, ClassesAreThoseInTheDataNotTheDeclaredList) {
  const Dataset d =
      arff("@relation r\n@attribute x numeric\n@attribute c {a,b,c,d}\n@data\n1,d\n2,b\n");
  EXPECT_EQ(d.classes.joined(), "b,d");
}

TEST(IoArff, SparseRows) {
  const char* text =
      "@relation s\n"
      "@attribute a numeric\n"
      "@attribute b numeric\n"
      "@attribute c numeric\n"
      "@attribute class {yes,no}\n"
      "@data\n"
      "{0 1.5, 2 3, 3 yes}\n"
      "{3 no}\n"
      "{ 1 -2 , 3 'yes' }\n";
  const Dataset d = arff(text);
  EXPECT_EQ(d.n_rows, 3u);
  EXPECT_EQ(d.features, (std::vector<float>{1.5f, 0, 3, 0, 0, 0, 0, -2, 0}));
  EXPECT_EQ(d.classes.joined(), "no,yes");
  EXPECT_EQ(d.labels, (std::vector<std::uint32_t>{1, 0, 1}));
}

TEST(IoArff, SparseRowErrors) {
  const std::string head =
      "@relation s\n@attribute a numeric\n@attribute b numeric\n@attribute class {y,n}\n@data\n";
  EXPECT_TRUE(contains(arff_error(head + "{0 1, 1 2}\n"),
                       {"iris.arff:6:", "omits the class attribute 'class'"}));
  EXPECT_TRUE(
      contains(arff_error(head + "{1 1, 0 2, 2 y}\n"), {"iris.arff:6:2:", "strictly ascending"}));
  EXPECT_TRUE(contains(arff_error(head + "{0 1, 0 2, 2 y}\n"), {"iris.arff:6:2:", "repeated"}));
  EXPECT_TRUE(contains(arff_error(head + "{0 1, 5 2, 2 y}\n"),
                       {"iris.arff:6:2:", "index 5 is out of range"}));
  EXPECT_TRUE(contains(arff_error(head + "{0 1, 2 y\n"), {"iris.arff:6:", "closing '}'"}));
  EXPECT_TRUE(
      contains(arff_error(head + "{x 1, 2 y}\n"), {"iris.arff:6:1:", "expected 'index value'"}));
  EXPECT_TRUE(
      contains(arff_error(head + "{0 abc, 2 y}\n"), {"iris.arff:6:1: 'abc' is not a number"}));
}

TEST(IoArff, ClassAttributeChoices) {
  const char* text =
      "@relation r\n@attribute k {p,q}\n@attribute x numeric\n@attribute y "
      "numeric\n@data\np,1,2\nq,3,4\n";
  LoadOptions first;
  first.label_column = LabelColumn::parse("1");
  const Dataset a = arff(text, first);
  EXPECT_EQ(a.classes.joined(), "p,q");
  EXPECT_EQ(a.features, (std::vector<float>{1, 2, 3, 4}));
  LoadOptions by_name;
  by_name.label_column = LabelColumn::parse("k");
  EXPECT_EQ(arff(text, by_name).labels, a.labels);
  LoadOptions neg;
  neg.label_column = LabelColumn::parse("-3");
  EXPECT_EQ(arff(text, neg).labels, a.labels);
  // Default (last): the nominal 'k' is a feature (one-hot over p, q), 'y' the class.
  const Dataset last = arff(text);
  EXPECT_EQ(last.classes.joined(), "2,4");
  EXPECT_EQ(last.features, (std::vector<float>{1, 0, 1, 0, 1, 3}));
  LoadOptions missing;
  missing.label_column = LabelColumn::parse("zz");
  EXPECT_TRUE(contains(arff_error(text, missing), {"iris.arff:", "no attribute named 'zz'"}));
}

TEST(IoArff, NoClass) {
  LoadOptions none;
  none.label_column.kind = LabelColumn::Kind::None;
  const Dataset d =
      arff("@relation r\n@attribute x numeric\n@attribute y real\n@data\n1,2\n", none);
  EXPECT_FALSE(d.has_labels);
  EXPECT_EQ(d.n_features, 2u);
}

TEST(IoArff, NumericAndStringClassValuesAreLabelText) {
  const Dataset num =
      arff("@relation r\n@attribute x numeric\n@attribute c integer\n@data\n1,10\n2,2\n3,2\n");
  EXPECT_EQ(num.classes.joined(), "2,10");
  EXPECT_TRUE(contains(
      arff_error("@relation r\n@attribute x numeric\n@attribute c integer\n@data\n1,abc\n"),
      {"iris.arff:5:2: 'abc' is not a number"}));
  const Dataset str = arff(
      "@relation r\n@attribute x numeric\n@attribute c string\n@data\n1,'hello world'\n2,bye\n");
  EXPECT_EQ(str.classes.joined(), "bye,hello world");
  EXPECT_TRUE(contains(
      arff_error("@relation r\n@attribute x numeric\n@attribute c date 'yyyy'\n@data\n1,2000\n"),
      {"iris.arff:3:", "class attribute 'c' is date"}));
}

TEST(IoArff, FeatureTypeErrorsNameTheAttribute) {
  // String and nominal features are one-hot encoded (io_arff_nominal_test.cpp); dates are
  // refused.
  EXPECT_TRUE(contains(arff_error("@relation r\n@attribute d date\n@attribute c {a}\n@data\nx,a\n"),
                       {"iris.arff:2:", "attribute 'd' is date"}));
  EXPECT_TRUE(contains(arff_error("@relation r\n@attribute rel relational\n"),
                       {"iris.arff:2:", "'rel' is relational"}));
  EXPECT_TRUE(contains(arff_error("@relation r\n@attribute x blob\n@data\n"),
                       {"iris.arff:2:", "unknown type 'blob'"}));
}

TEST(IoArff, MissingValuesFollowThePolicy) {
  LoadOptions strict;
  strict.missing = flynn::MissingPolicy::Error;
  EXPECT_TRUE(contains(arff_error(std::string(kIris) + "?,1,2,Iris-setosa\n", strict),
                       {"iris.arff:15:1: missing value '?' for attribute 'sepal length'"}));
  EXPECT_TRUE(contains(arff_error(std::string(kIris) + "1,1,2,?\n"),
                       {"iris.arff:15:4: missing value", "'class'"}));
}

TEST(IoArff, UndeclaredClassValue) {
  EXPECT_TRUE(contains(
      arff_error(std::string(kIris) + "1,1,2,Iris-unknown\n"),
      {"iris.arff:15:4: class value 'Iris-unknown' is not declared for attribute 'class'"}));
}

TEST(IoArff, RowErrors) {
  EXPECT_TRUE(contains(arff_error(std::string(kIris) + "1,2,Iris-setosa\n"),
                       {"iris.arff:15: 3 values, expected 4"}));
  EXPECT_TRUE(contains(arff_error(std::string(kIris) + "1,nan,2,Iris-setosa\n"),
                       {"iris.arff:15:2: NaN is not allowed"}));
  EXPECT_TRUE(contains(arff_error(std::string(kIris) + "1,inf,2,Iris-setosa\n"),
                       {"iris.arff:15:2: infinity"}));
  EXPECT_TRUE(contains(arff_error(std::string(kIris) + "1,'2,2,Iris-setosa\n"),
                       {"iris.arff:15:", "unterminated"}));
}

TEST(IoArff, HeaderErrors) {
  EXPECT_TRUE(contains(arff_error(""), {"iris.arff: empty file"}));
  EXPECT_TRUE(contains(arff_error("% only a comment\n"), {"iris.arff: empty file"}));
  EXPECT_TRUE(
      contains(arff_error("@relation r\n@attribute x numeric\n"), {"iris.arff: no @data section"}));
  EXPECT_TRUE(contains(arff_error("@relation r\n@data\n1\n"),
                       {"iris.arff:2: @data before any @attribute"}));
  EXPECT_TRUE(contains(arff_error("@relation r\nhello\n"),
                       {"iris.arff:2: expected @relation, @attribute or @data"}));
  EXPECT_TRUE(
      contains(arff_error("@relation r\n@attribute x numeric\n@attribute c {a}\n@data\n\n% c\n"),
               {"iris.arff: no data rows"}));
  EXPECT_TRUE(contains(arff_error("@relation r\n@attribute x numeric\n@attribute x numeric\n"),
                       {"iris.arff:3:", "'x' is already declared on line 2"}));
  EXPECT_TRUE(contains(arff_error("@relation r\n@attribute 'x numeric\n"),
                       {"iris.arff:2:", "unterminated quote"}));
  EXPECT_TRUE(
      contains(arff_error("@relation r\n@attribute c {a,b\n"), {"iris.arff:2:", "missing '}'"}));
}

TEST(IoArff, NominalListWithoutSpaceAndQuotedValues) {
  const Dataset d = arff(
      "@relation r\n@attribute x numeric\n@attribute class{'a b',\"c,d\",e\\'f}\n@data\n1,'a "
      "b'\n2,\"c,d\"\n3,e\\'f\n");
  EXPECT_EQ(d.n_rows, 3u);
  EXPECT_EQ(d.classes.size(), 3u);
}

TEST(IoArff, ExpectedFeatures) {
  LoadOptions o;
  o.expected_features = 3;
  EXPECT_TRUE(arff(kIris, o).has_labels);
  o.expected_features = 4;
  // As many attributes as features: unlabelled, so the nominal class would be a feature,
  // which a model without a table schema has only numbers for.
  EXPECT_TRUE(contains(arff_error(kIris, o), {"iris.arff:7: attribute 'class' is nominal"}));
  o.expected_features = 7;
  EXPECT_TRUE(contains(arff_error(kIris, o),
                       {"iris.arff: 4 attributes, model expects 7 features (or 8 with a class"}));
  LoadOptions unl;
  unl.expected_features = 2;
  const Dataset d =
      arff("@relation r\n@attribute x numeric\n@attribute y numeric\n@data\n1,2\n", unl);
  EXPECT_FALSE(d.has_labels);
}

TEST(IoArff, MaxValuesGuardsSparseExpansion) {
  std::string text = "@relation r\n";
  for (int i = 0; i < 100; ++i) text += "@attribute a" + std::to_string(i) + " numeric\n";
  text += "@attribute c {x}\n@data\n";
  for (int i = 0; i < 50; ++i) text += "{100 x}\n";
  LoadOptions o;
  o.max_values = 1000;
  EXPECT_TRUE(contains(arff_error(text, o), {"iris.arff:", "too large to load"}));
  EXPECT_EQ(arff(text).n_rows, 50u);
}

TEST(IoArff, LoadDatasetDetectsArffByNameAndContent) {
  flynn::test::TempDir dir;
  flynn::test::write_text(dir.file("iris.arff"), kIris);
  flynn::test::write_text(dir.file("iris.txt"), kIris);  // name says CSV, content says ARFF
  flynn::test::write_text(dir.file("iris.arff.gz"), flynn::test::gzip_bytes(kIris));
  for (const char* name : {"iris.arff", "iris.txt", "iris.arff.gz"}) {
    const Dataset d = flynn::io::load_dataset(dir.file(name));
    EXPECT_EQ(d.n_rows, 3u) << name;
    EXPECT_EQ(d.classes.size(), 3u) << name;
  }
}

}  // namespace
