// LabelSet and Dataset.
#include <gtest/gtest.h>

#include "flynn/dataset.hpp"
#include "flynn/io/loaders.hpp"
#include "io_test_helpers.hpp"

namespace {

using flynn::Dataset;
using flynn::LabelSet;
using flynn::test::contains;
using flynn::test::error_of;

Dataset make(const std::string& source, std::vector<float> features, std::size_t d,
             const std::vector<std::string>& label_names, std::vector<std::uint64_t> origin = {}) {
  Dataset ds;
  ds.source = source;
  ds.n_features = d;
  ds.n_rows = features.size() / d;
  ds.features = std::move(features);
  ds.has_labels = true;
  ds.classes = LabelSet::sorted(label_names);
  for (const auto& n : label_names)
    ds.labels.push_back(static_cast<std::uint32_t>(ds.classes.find(n)));
  if (origin.empty())
    for (std::size_t i = 0; i < ds.n_rows; ++i) origin.push_back(i + 1);
  ds.row_origin = std::move(origin);
  return ds;
}

TEST(DatasetLabelSet, ConstructorKeepsOrderAndRejectsBadNames) {
  const LabelSet s({"b", "a", "c"});
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.name(0), "b");
  EXPECT_EQ(s.find("a"), 1);
  EXPECT_EQ(s.find("zz"), -1);
  EXPECT_EQ(s.joined(), "b,a,c");
  EXPECT_TRUE(contains(error_of([] { LabelSet({"a", "b", "a"}); }), {"duplicate class name 'a'"}));
  EXPECT_TRUE(contains(error_of([] { LabelSet({"a", ""}); }), {"empty class name"}));
  EXPECT_TRUE(LabelSet().empty());
}

TEST(DatasetLabelSet, SortedIsNumericForIntegers) {
  EXPECT_EQ(LabelSet::sorted({"10", "2", "-1", "2"}).joined(), "-1,2,10");
  EXPECT_EQ(
      LabelSet::sorted({"100000000000000000000000", "9", "-99999999999999999999999"}).joined(),
      "-99999999999999999999999,9,100000000000000000000000");
  EXPECT_EQ(LabelSet::sorted({"+3", "-0", "0", "2"}).joined(), "-0,0,2,+3");
}

TEST(DatasetLabelSet, SortedIsBytewiseOtherwise) {
  EXPECT_EQ(LabelSet::sorted({"10", "2", "x"}).joined(), "10,2,x");
  EXPECT_EQ(LabelSet::sorted({"b", "B", "a", "a"}).joined(), "B,a,b");
  EXPECT_EQ(LabelSet::sorted({"1.5", "1"}).joined(), "1,1.5");
  EXPECT_TRUE(LabelSet::sorted({}).empty());
}

TEST(DatasetLabelSet, ParseList) {
  const LabelSet s = LabelSet::parse_list("cat, dog,bird");
  EXPECT_EQ(s.names(), (std::vector<std::string>{"cat", "dog", "bird"}));
  EXPECT_EQ(LabelSet::parse_list(s.joined()), s);
  EXPECT_EQ(LabelSet::parse_list("x").size(), 1u);
  EXPECT_TRUE(contains(error_of([] { LabelSet::parse_list("a,,b"); }), {"empty item", "'a,,b'"}));
  EXPECT_TRUE(contains(error_of([] { LabelSet::parse_list(""); }), {"empty item"}));
  EXPECT_TRUE(contains(error_of([] { LabelSet::parse_list("a,b,"); }), {"empty item"}));
  EXPECT_TRUE(
      contains(error_of([] { LabelSet::parse_list("a,b,a"); }), {"duplicate class name 'a'"}));
}

TEST(DatasetRelabel, MapsIdsByName) {
  Dataset d = make("d.csv", {1, 2, 3}, 1, {"b", "a", "b"});
  ASSERT_EQ(d.classes.joined(), "a,b");
  d.relabel(LabelSet({"b", "c", "a"}));
  EXPECT_EQ(d.classes.joined(), "b,c,a");
  EXPECT_EQ(d.labels, (std::vector<std::uint32_t>{0, 2, 0}));
}

TEST(DatasetRelabel, UnknownLabelNamesFileAndLine) {
  Dataset d = make("data.csv", {1, 2, 3}, 1, {"a", "b", "zebra"}, {2, 5, 9});
  const Dataset before = d;
  EXPECT_TRUE(contains(error_of([&] {
                         d.relabel(LabelSet({"a", "b"}));
                       }),
                       {"data.csv:9: label 'zebra' is not one of the known classes (a,b)"}));
  EXPECT_EQ(d.labels, before.labels);  // unchanged on failure
  EXPECT_EQ(d.classes, before.classes);
}

TEST(DatasetRelabel, FromALoadedFile) {
  const Dataset loaded = flynn::io::parse_csv("1,a\n2,b\n\n3,c\n", {}, "x.csv");
  Dataset d = loaded;
  EXPECT_TRUE(contains(error_of([&] { d.relabel(LabelSet({"a", "b"})); }), {"x.csv:4: label 'c'"}));
}

TEST(DatasetSubset, CopiesRowsLabelsAndOrigins) {
  const Dataset d = make("d.csv", {1, 2, 3, 4, 5, 6}, 2, {"x", "y", "x"}, {3, 4, 7});
  const Dataset s = d.subset({2, 0, 2});
  EXPECT_EQ(s.n_rows, 3u);
  EXPECT_EQ(s.n_features, 2u);
  EXPECT_EQ(s.features, (std::vector<float>{5, 6, 1, 2, 5, 6}));
  EXPECT_EQ(s.labels, (std::vector<std::uint32_t>{0, 0, 0}));
  EXPECT_EQ(s.classes, d.classes);
  EXPECT_EQ(s.row_origin, (std::vector<std::uint64_t>{7, 3, 7}));
  EXPECT_EQ(s.source, "d.csv");
  const Dataset empty = d.subset({});
  EXPECT_EQ(empty.n_rows, 0u);
  EXPECT_EQ(empty.n_features, 2u);
}

TEST(DatasetAppend, MergesLabelsByName) {
  Dataset a = make("a.csv", {1, 2}, 1, {"10", "2"});
  const Dataset b = make("b.csv", {3, 4}, 1, {"2", "-1"});
  a.append(b);
  EXPECT_EQ(a.n_rows, 4u);
  EXPECT_EQ(a.features, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(a.classes.joined(), "-1,2,10");
  std::vector<std::string> names;
  for (auto l : a.labels) names.push_back(a.classes.name(l));
  EXPECT_EQ(names, (std::vector<std::string>{"10", "2", "2", "-1"}));
  EXPECT_EQ(a.row_origin, (std::vector<std::uint64_t>{1, 2, 1, 2}));
  EXPECT_EQ(a.source, "a.csv+b.csv");
}

TEST(DatasetAppend, KeepsAnExistingOrderWhenNothingIsNew) {
  Dataset a = make("a.csv", {1, 2}, 1, {"x", "y"});
  a.relabel(LabelSet({"y", "x"}));
  a.append(make("a.csv", {3}, 1, {"x"}));
  EXPECT_EQ(a.classes.joined(), "y,x");
  EXPECT_EQ(a.labels, (std::vector<std::uint32_t>{1, 0, 1}));
}

TEST(DatasetAppend, IntoAnEmptyDatasetAndErrors) {
  Dataset empty;
  empty.append(make("b.csv", {1, 2}, 2, {"q"}));
  EXPECT_EQ(empty.n_rows, 1u);
  EXPECT_EQ(empty.n_features, 2u);
  EXPECT_EQ(empty.source, "b.csv");
  Dataset a = make("a.csv", {1, 2}, 2, {"q"});
  EXPECT_TRUE(contains(error_of([&] {
                         a.append(make("c.csv", {1, 2, 3}, 3, {"q"}));
                       }),
                       {"cannot append c.csv (3 features) to a.csv (2 features)"}));
  Dataset unl = make("u.csv", {1, 2}, 2, {"q"});
  unl.has_labels = false;
  unl.labels.clear();
  unl.classes = LabelSet();
  EXPECT_TRUE(contains(error_of([&] { a.append(unl); }), {"one has labels"}));
}

TEST(DatasetClassSizes, CountsRowsPerClass) {
  const Dataset d = make("d.csv", {1, 2, 3, 4}, 1, {"a", "b", "b", "b"});
  EXPECT_EQ(d.class_sizes(), (std::vector<std::size_t>{1, 3}));
  Dataset r = d;
  r.relabel(LabelSet({"b", "z", "a"}));
  EXPECT_EQ(r.class_sizes(), (std::vector<std::size_t>{3, 0, 1}));
  Dataset unl = d;
  unl.has_labels = false;
  EXPECT_TRUE(contains(error_of([&] { unl.class_sizes(); }), {"d.csv: the data has no labels"}));
}

TEST(DatasetRequireTrainable, NeedsTwoPopulatedClasses) {
  make("d.csv", {1, 2}, 1, {"a", "b"}).require_trainable();
  EXPECT_TRUE(contains(error_of([] {
                         make("d.csv", {1, 2}, 1, {"a", "a"}).require_trainable();
                       }),
                       {"d.csv: all 2 rows have the class 'a'", "at least two classes"}));
  Dataset r = make("d.csv", {1, 2}, 1, {"a", "a"});
  r.relabel(LabelSet({"a", "b"}));  // two classes declared, one populated
  EXPECT_TRUE(contains(error_of([&] { r.require_trainable(); }), {"at least two classes"}));
  Dataset unl = make("d.csv", {1, 2}, 1, {"a", "b"});
  unl.has_labels = false;
  EXPECT_TRUE(
      contains(error_of([&] { unl.require_trainable(); }), {"d.csv: the data has no labels"}));
  Dataset none = make("d.csv", {1, 2}, 1, {"a", "b"}).subset({});
  EXPECT_TRUE(contains(error_of([&] { none.require_trainable(); }), {"d.csv: no rows"}));
}

TEST(DatasetRow, PointsIntoFeatures) {
  Dataset d = make("d.csv", {1, 2, 3, 4, 5, 6}, 3, {"a", "b"});
  EXPECT_EQ(d.row(1)[0], 4.0f);
  d.row(1)[2] = 9;
  EXPECT_EQ(d.features[5], 9.0f);
}

}  // namespace
