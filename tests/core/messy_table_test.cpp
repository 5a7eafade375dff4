// Messy tables in the core library: column selection (--ignore-cols, --feature-cols,
// --id-col), missing values under each policy with exact training means, feature names
// matched (and reordered) at prediction, categorical columns one-hot encoded, and the
// table section of the model file (format 3; positional models keep their old bytes).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/io/table_columns.hpp"

namespace flynn {
namespace {

using io::ColumnSelector;
using io::LoadOptions;

Dataset csv(const std::string& text, const LoadOptions& o = {}) {
  return io::parse_csv(text, o, "data.csv");
}

std::string csv_error(const std::string& text, const LoadOptions& o = {}) {
  try {
    csv(text, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---- column selection -----------------------------------------------------------------------

TEST(ColumnSelector, ParsesNamesNumbersAndRanges) {
  const ColumnSelector s = ColumnSelector::parse("id, 3,5-7 ,blood-pressure", "--ignore-cols");
  ASSERT_EQ(s.items.size(), 4u);
  EXPECT_EQ(s.items[0].name, "id");
  EXPECT_EQ(s.items[1].first, 3u);
  EXPECT_EQ(s.items[1].last, 3u);
  EXPECT_EQ(s.items[2].first, 5u);
  EXPECT_EQ(s.items[2].last, 7u);
  EXPECT_EQ(s.items[3].name, "blood-pressure");  // not a range: its sides are not numbers
  EXPECT_TRUE(s.uses_names());
  EXPECT_TRUE(ColumnSelector::parse("", "--ignore-cols").empty());
  EXPECT_FALSE(ColumnSelector::parse("1-2", "--x").uses_names());
}

TEST(ColumnSelector, RejectsBadItemsNamingTheFlag) {
  for (const std::string bad : {"1,,2", "0", "7-3", "-2"}) {
    try {
      ColumnSelector::parse(bad, "--feature-cols");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_TRUE(contains(e.what(), "--feature-cols")) << e.what();
    }
  }
}

TEST(ColumnSelector, ResolvesAgainstTheHeader) {
  const std::vector<std::string> names = {"id", "a", "b", "c", "label"};
  EXPECT_EQ(ColumnSelector::parse("c,1,2-3", "--x").resolve(names, 5, "d.csv", "--x"),
            (std::vector<std::size_t>{0, 1, 2, 3}));
  try {
    ColumnSelector::parse("zz", "--x").resolve(names, 5, "d.csv", "--x");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "no column named 'zz'")) << e.what();
  }
  try {
    ColumnSelector::parse("9", "--x").resolve(names, 5, "d.csv", "--x");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "column 9 is out of range (5 columns)")) << e.what();
  }
  try {
    ColumnSelector::parse("a", "--x").resolve({}, 5, "d.csv", "--x");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "without a header")) << e.what();
  }
}

TEST(MessyCsv, IdIgnoredAndFeatureColumns) {
  const std::string text = "id,a,junk,b,label\nS1,1,x,2,cat\nS2,3,y,4,dog\n";
  LoadOptions o;
  o.id_column = io::LabelColumn::parse("id");
  o.ignore_columns = ColumnSelector::parse("junk", "--ignore-cols");
  Dataset d = csv(text, o);
  EXPECT_EQ(d.n_features, 2u);
  EXPECT_EQ(d.features, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(d.row_ids, (std::vector<std::string>{"S1", "S2"}));
  EXPECT_EQ(d.schema.id_name, "id");
  EXPECT_EQ(d.schema.label_name, "label");
  ASSERT_EQ(d.schema.columns.size(), 2u);
  EXPECT_EQ(d.schema.columns[1].name, "b");

  LoadOptions f;
  f.id_column = io::LabelColumn::parse("1");
  f.feature_columns = ColumnSelector::parse("4", "--feature-cols");
  d = csv(text, f);
  EXPECT_EQ(d.features, (std::vector<float>{2, 4}));
  EXPECT_EQ(d.classes.names(), (std::vector<std::string>{"cat", "dog"}));

  LoadOptions clash;
  clash.id_column = io::LabelColumn::parse("label");
  clash.label_column = io::LabelColumn::parse("label");
  EXPECT_TRUE(contains(csv_error(text, clash), "cannot be both the label and the id column"));
}

// ---- missing values -----------------------------------------------------------------------------

TEST(MissingValues, SpellingsOfAMissingCell) {
  for (const char* m : {"", "  ", "NA", "na", "?", "nan", "NaN", "NAN"}) EXPECT_TRUE(is_missing_cell(m)) << m;
  for (const char* v : {"0", "N", "none", "-", "inf"}) EXPECT_FALSE(is_missing_cell(v)) << v;
  EXPECT_EQ(parse_missing_policy("Zero"), MissingPolicy::Zero);
  EXPECT_THROW(parse_missing_policy("median"), Error);
}

TEST(MissingValues, PolicyErrorZeroAndMean) {
  const std::string text = "1,NA,a\n2,4,b\n3,,a\n?,8,b\n";
  LoadOptions err;
  err.missing = MissingPolicy::Error;
  EXPECT_TRUE(contains(csv_error(text, err), "data.csv:1:2: missing value 'NA' (--missing error"));

  LoadOptions zero;
  zero.missing = MissingPolicy::Zero;
  Dataset z = csv(text, zero);
  EXPECT_EQ(z.features, (std::vector<float>{1, 0, 2, 4, 3, 0, 0, 8}));
  EXPECT_TRUE(z.schema.empty());  // nothing positional data would lose: no table section

  Dataset m = csv(text);  // default: mean of the non-missing cells, exact
  EXPECT_EQ(m.features, (std::vector<float>{1, 6, 2, 4, 3, 6, 2, 8}));
  ASSERT_FALSE(m.schema.empty());  // the means are kept for prediction
  EXPECT_EQ(m.schema.fill, (std::vector<float>{2, 6}));
}

TEST(MissingValues, DeferredMeansEqualCentralOnesWhateverTheSplit) {
  std::string text;
  for (int r = 0; r < 40; ++r)
    text += (r % 7 == 0 ? std::string("NA") : std::to_string(0.1 * r)) + "," +
            (r % 5 == 0 ? std::string("") : std::to_string(1.0 / (r + 1))) + "," +
            (r % 2 ? "a" : "b") + "\n";
  const Dataset central = csv(text);
  LoadOptions deferred;
  deferred.impute = false;
  const Dataset pending = csv(text, deferred);
  EXPECT_TRUE(has_missing(pending));
  ImputationSums parts(2);
  for (std::size_t start = 0; start < pending.n_rows; start += 9) {
    std::vector<std::size_t> rows;
    for (std::size_t r = start; r < std::min(pending.n_rows, start + 9); ++r) rows.push_back(r);
    const auto limbs = ImputationSums::of(pending.subset(rows)).to_limbs();
    parts += ImputationSums::from_limbs(limbs, 2);
  }
  EXPECT_EQ(parts, ImputationSums::of(pending));
  Dataset completed = pending;
  io::complete_table(completed, parts);
  EXPECT_EQ(completed.features, central.features);
  EXPECT_EQ(completed.schema, central.schema);
  EXPECT_FALSE(has_missing(completed));
}

// ---- categorical columns ----------------------------------------------------------------------

TEST(Categorical, OneHotWithSortedCategories) {
  const Dataset d = csv("x,color,label\n1,red,a\n2,blue,b\n3,NA,a\n4,green,b\n5,red,a\n");
  ASSERT_EQ(d.schema.columns.size(), 2u);
  EXPECT_EQ(d.schema.columns[1].categories, (std::vector<std::string>{"blue", "green", "red"}));
  EXPECT_EQ(d.n_features, 4u);
  EXPECT_EQ(std::vector<float>(d.row(0), d.row(0) + 4), (std::vector<float>{1, 0, 0, 1}));
  EXPECT_EQ(std::vector<float>(d.row(1), d.row(1) + 4), (std::vector<float>{2, 1, 0, 0}));
  EXPECT_EQ(std::vector<float>(d.row(2), d.row(2) + 4), (std::vector<float>{3, 0, 0, 0}));  // missing
  EXPECT_EQ(d.schema.feature_name(3), "color=red");

  // Prediction: the model's categories; an unseen one is an all-zero block.
  LoadOptions p;
  p.schema = &d.schema;
  const Dataset q = csv("color,x\npurple,7\ngreen,8\n", p);
  EXPECT_FALSE(q.has_labels);
  EXPECT_EQ(q.features, (std::vector<float>{7, 0, 0, 0, 8, 0, 1, 0}));
}

TEST(Categorical, HeaderlessTextColumnsAreData) {
  // Line 1 holds text where line 2 does too: categorical data, not a header.
  const Dataset d = csv("red,1,a\nblue,2,b\nred,3,a\n");
  EXPECT_EQ(d.n_rows, 3u);
  EXPECT_FALSE(d.schema.named);
  EXPECT_EQ(d.schema.columns[0].categories, (std::vector<std::string>{"blue", "red"}));
}

TEST(Categorical, AnIdentifierColumnIsRefusedWithTheFlagsToUse) {
  std::string text = "sid,x,label\n";
  // fmt rather than "S" + std::string&&: GCC 12's -Wrestrict misfires on the latter.
  for (int r = 0; r < 30; ++r) text += fmt::format("S{},{},c{}\n", 10000 + r, r, r % 2);
  const std::string e = csv_error(text);
  EXPECT_TRUE(contains(e, "data.csv:2:1: column 'sid' (column 1)")) << e;
  EXPECT_TRUE(contains(e, "--id-col sid")) << e;
  EXPECT_TRUE(contains(e, "--ignore-cols sid")) << e;
  LoadOptions o;
  o.id_column = io::LabelColumn::parse("sid");
  EXPECT_EQ(csv(text, o).n_features, 1u);
}

TEST(Categorical, OneHotSizeIsBoundedByTheInput) {
  // 40 text columns of 50 categories each: 2000 features per row, 400000 values.
  std::string text;
  for (int r = 0; r < 200; ++r) {
    for (int c = 0; c < 40; ++c) {
      text += 'v';  // appended piece by piece: GCC 12's -Wrestrict misfires on "v" + string&&
      text += std::to_string((r + c) % 50);
      text += ',';
    }
    text += (r % 2 ? "a\n" : "b\n");
  }
  LoadOptions o;
  o.max_values = 100000;
  EXPECT_TRUE(contains(csv_error(text, o), "after one-hot encoding the text columns is too large"));
  EXPECT_EQ(csv(text).n_features, 2000u);  // within the default bound for its size
}

// ---- names at prediction ------------------------------------------------------------------------

TEST(NameMatching, ReordersColumnsAndNamesWhatIsMissingOrUnknown) {
  const Dataset train = csv("a,b,c,label\n1,2,3,x\n4,5,6,y\n");
  LoadOptions p;
  p.schema = &train.schema;
  const Dataset q = csv("c,label,a,b\n30,x,10,20\n", p);
  EXPECT_TRUE(q.has_labels);
  EXPECT_EQ(q.features, (std::vector<float>{10, 20, 30}));

  EXPECT_TRUE(contains(csv_error("a,c\n1,3\n", p), "the model's feature column 'b' is not in the header"));
  const std::string unknown = csv_error("a,b,c,extra\n1,2,3,4\n", p);
  EXPECT_TRUE(contains(unknown, "column 'extra' (column 4) is not one of the model's features")) << unknown;
  EXPECT_TRUE(contains(unknown, "--ignore-cols extra")) << unknown;
  p.ignore_columns = ColumnSelector::parse("extra", "--ignore-cols");
  EXPECT_EQ(csv("a,b,c,extra\n1,2,3,4\n", p).features, (std::vector<float>{1, 2, 3}));

  // A file without a header is matched by position.
  LoadOptions positional;
  positional.schema = &train.schema;
  EXPECT_EQ(csv("7,8,9\n", positional).features, (std::vector<float>{7, 8, 9}));
}

TEST(NameMatching, MissingCellsAtPredictionTakeTheStoredMeans) {
  const Dataset train = csv("a,b,label\n1,10,x\n3,NA,y\n");
  EXPECT_EQ(train.schema.fill, (std::vector<float>{2, 10}));
  LoadOptions p;
  p.schema = &train.schema;
  EXPECT_EQ(csv("b,a\n?,NA\n", p).features, (std::vector<float>{2, 10}));
  TableSchema no_means = train.schema;
  no_means.fill.clear();
  p.schema = &no_means;
  EXPECT_TRUE(contains(csv_error("b,a\n?,1\n", p), "use --missing zero"));
}

// ---- ARFF ---------------------------------------------------------------------------------------

TEST(MessyArff, MissingValuesAndAttributeNames) {
  const std::string text =
      "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute class {x,y}\n@data\n"
      "1,?,x\n3,4,y\n?,8,x\n";
  const Dataset d = io::parse_arff(text, {}, "r.arff");
  EXPECT_EQ(d.features, (std::vector<float>{1, 6, 3, 4, 2, 8}));
  EXPECT_TRUE(d.schema.named);
  EXPECT_EQ(d.schema.columns[1].name, "b");
  EXPECT_EQ(d.schema.label_name, "class");
  // Prediction fills with the stored means; renamed attributes are refused.
  LoadOptions p;
  p.schema = &d.schema;
  EXPECT_EQ(io::parse_arff(text, p, "r.arff").features, d.features);
  const std::string renamed =
      "@relation r\n@attribute a numeric\n@attribute z numeric\n@attribute class {x,y}\n@data\n1,2,x\n";
  try {
    io::parse_arff(renamed, p, "s.arff");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "the model expects feature 'b'")) << e.what();
  }
}

// ---- the model file -----------------------------------------------------------------------------

FlyNN train_on(const Dataset& data) {
  HyperParams h;
  h.m = 256;
  h.rho = 8;
  h.s = 2;
  h.variant = Defaults::variant();  // not the low-dimensional anchor default (format 5)
  h.filter_scoring = FilterScoring::Absolute;  // not relative scoring (format 6)
  FlyNN model(h.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size()),
              data.classes, 1);
  model.fit(data);
  model.clear_temperature();  // format 3 is that of a model without a calibration
  model.set_table_schema(data.schema);
  return model;
}

TEST(TableSection, RoundTripsInFormat3) {
  const Dataset d = csv("id,x,color,label\nS1,1,red,a\nS2,NA,blue,b\nS3,3,red,a\nS4,5,blue,b\n",
                        [] {
                          LoadOptions o;
                          o.id_column = io::LabelColumn::parse("id");
                          return o;
                        }());
  const FlyNN model = train_on(d);
  const std::string bytes = io::serialize_model(model);
  EXPECT_EQ(bytes[8], 3);
  const FlyNN back = io::deserialize_model(bytes, "m");
  EXPECT_EQ(back.table_schema(), d.schema);
  EXPECT_EQ(io::serialize_model(back), bytes);
  EXPECT_EQ(back.table_schema().id_name, "id");
}

TEST(TableSection, PositionalDataKeepsTheOldFormat) {
  const Dataset d = csv("1,2,a\n3,4,b\n5,6,a\n");
  EXPECT_TRUE(d.schema.empty());
  HyperParams h;
  h.m = 256;
  h.rho = 8;
  h.s = 2;
  h.variant = Variant{};  // paper
  FlyNN model(h.resolve(2, 2), d.classes, 1);
  model.fit(d);
  model.clear_temperature();  // without a calibration (a later format)
  model.set_table_schema(d.schema);
  EXPECT_EQ(io::serialize_model(model)[8], 1);
}

TEST(TableSection, CorruptSectionsAreCleanErrors) {
  const Dataset d = csv("x,color,label\n1,red,a\n2,blue,b\n");
  const std::string good = io::serialize_model(train_on(d));
  // Truncating anywhere inside the file is a clean error, never a crash.
  for (std::size_t cut = 20; cut < good.size(); cut += 7)
    EXPECT_THROW(io::parse_model(good.substr(0, cut), "m"), Error) << cut;
}

}  // namespace
}  // namespace flynn
