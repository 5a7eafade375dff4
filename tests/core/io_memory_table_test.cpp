// Tables held in memory (flynn/io/memory_table.hpp) encode as the same table written as CSV:
// the same features, schema (names, categories, fill values) and messages, so Python's
// DataFrames and the CSV pandas writes for them give the same model.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/memory_table.hpp"

namespace flynn {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

io::MemoryTable::Column numeric(const std::vector<float>& values) {
  io::MemoryTable::Column c;
  c.numeric = true;
  c.values = values.data();
  return c;
}

io::MemoryTable::Column text(std::vector<std::string> cells) {
  io::MemoryTable::Column c;
  c.cells = std::move(cells);
  return c;
}

void expect_same_features(const Dataset& a, const Dataset& b) {
  ASSERT_EQ(a.n_rows, b.n_rows);
  ASSERT_EQ(a.n_features, b.n_features);
  for (std::size_t i = 0; i < a.features.size(); ++i) EXPECT_FLOAT_EQ(a.features[i], b.features[i]) << i;
}

TEST(MemoryTable, TrainsAndPredictsAsTheSameCsv) {
  const std::vector<float> age = {30, kNaN, 50, 20};
  const std::vector<float> height = {1.5f, 1.75f, 1.25f, 1.5f};
  io::MemoryTable t;
  t.n_rows = 4;
  t.names = {"age", "color", "height"};
  t.columns.push_back(numeric(age));
  t.columns.push_back(text({"red", "blue", "", "red"}));
  t.columns.push_back(numeric(height));
  const Dataset mem = io::encode_training_table(t, "y", MissingPolicy::Mean);

  const std::string csv = "age,color,height,y\n30,red,1.5,a\n,blue,1.75,b\n50,,1.25,a\n20,red,1.5,b\n";
  const Dataset file = io::parse_csv(csv, {}, "data.csv");
  expect_same_features(mem, file);
  EXPECT_EQ(mem.schema, file.schema);
  EXPECT_EQ(mem.schema.columns[1].categories, (std::vector<std::string>{"blue", "red"}));
  EXPECT_NEAR(mem.features[1 * mem.n_features], 100.0 / 3, 1e-5);  // the training mean

  // Prediction under the learned schema, columns given in another order by name.
  const std::vector<float> height2 = {1.0f};
  const std::vector<float> age2 = {kNaN};
  io::MemoryTable p;
  p.n_rows = 1;
  p.names = {"height", "color", "age"};
  p.columns.push_back(numeric(height2));
  p.columns.push_back(text({"green"}));  // unseen: an all-zero block
  p.columns.push_back(numeric(age2));
  const Dataset pred = io::encode_table(p, mem.schema, MissingPolicy::Mean);
  io::LoadOptions o;
  o.schema = &mem.schema;
  o.label_column.kind = io::LabelColumn::Kind::None;
  const Dataset pred_file = io::parse_csv("height,color,age\n1.0,green,\n", o, "new.csv");
  expect_same_features(pred, pred_file);
}

TEST(MemoryTable, MessagesNameTheCell) {
  const std::vector<float> v = {1, std::numeric_limits<float>::infinity()};
  io::MemoryTable t;
  t.n_rows = 2;
  t.columns.push_back(numeric(v));
  try {
    io::encode_training_table(t, "", MissingPolicy::Mean);
    FAIL() << "an infinite value was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("X:2:1: infinite value"), std::string::npos) << e.what();
  }
  io::MemoryTable empty;
  empty.columns.push_back(text({}));
  EXPECT_THROW(io::encode_training_table(empty, "", MissingPolicy::Mean), Error);
  io::MemoryTable ragged;
  ragged.n_rows = 2;
  ragged.columns.push_back(text({"a"}));
  EXPECT_THROW(io::encode_table(ragged, {}, MissingPolicy::Zero), Error);
}

}  // namespace
}  // namespace flynn
