// The model file summary (`flynn info`): counts, format version, checksum and footprint of
// a small model, as JSON and as text.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "flynn/classifier.hpp"
#include "flynn/eval/model_summary.hpp"
#include "flynn/io/model_file.hpp"
#include "test_support.hpp"

namespace flynn {
namespace {

TEST(ModelSummary, JsonDescribesASmallModel) {
  const Dataset data = test::blobs(3, 40, 6, 7);
  HyperParams p;
  p.seed = 7;
  p.m = 200;
  p.rho = 8;
  p.variant = Variant{};  // a paper model: written as format version 1
  FlyNN model(p.resolve(6, 3), data.classes, 1);
  model.fit(data);
  model.clear_temperature();  // without a calibration (which needs version 10)
  test::TempDir dir;
  const std::string path = dir.file("m.flynn");
  io::save_model(model, path);
  const std::string bytes = io::read_model_file(path);

  const eval::ModelFileSummary s =
      eval::model_file_summary(path, io::kDefaultMaxInputBytes, {0, ModelUse::Inspect});
  const nlohmann::json& j = s.json;
  EXPECT_EQ(j["model"], path);
  EXPECT_EQ(j["format_version"], io::kPaperModelFormatVersion);
  EXPECT_EQ(j["file_bytes"], bytes.size());
  EXPECT_EQ(j["crc32"], fmt::format("{:08x}", io::model_checksum(bytes)));
  EXPECT_EQ(j["training_rows"], 120u);
  EXPECT_FALSE(j["differentially_private"].get<bool>());
  EXPECT_FALSE(j.contains("dp"));
  EXPECT_FALSE(j.contains("table"));
  ASSERT_EQ(j["classes"].size(), 3u);
  for (const auto& c : j["classes"]) {
    EXPECT_EQ(c["rows"], 40u);
    EXPECT_GT(c["nonzero_units"].get<std::uint64_t>(), 0u);
    EXPECT_LE(c["nonzero_units"].get<std::uint64_t>(), 200u);
    EXPECT_LE(c["max_count"].get<std::uint64_t>(), 40u);
  }
  EXPECT_EQ(j["classes"][0]["label"], "c0");
  EXPECT_TRUE(j["footprint"]["within_limit"].get<bool>());
  EXPECT_EQ(j["footprint"]["limit_bytes"], default_model_memory_limit(bytes.size()));

  EXPECT_EQ(s.text.rfind(fmt::format("model:    {} (", path), 0), 0u) << s.text;
  EXPECT_NE(s.text.find("format v1, crc32 " + j["crc32"].get<std::string>()), std::string::npos);
  EXPECT_NE(s.text.find("training: 120 rows\n"), std::string::npos);
  EXPECT_NE(s.text.find("classes:  3\n"), std::string::npos);
}

// `model` saved to a file and summarised as `flynn info` does.
eval::ModelFileSummary summary_of(const FlyNN& model) {
  test::TempDir dir;
  const std::string path = dir.file("m.flynn");
  io::save_model(model, path);
  return eval::model_file_summary(path, io::kDefaultMaxInputBytes, {0, ModelUse::Inspect});
}

// With pairs, each class's line also describes its pair block (cells m … m + pair_cells()),
// counted apart from the units: the figures equal a count over the model's own counts.
TEST(ModelSummary, PairModelsDescribeTheirPairCellsApartFromTheUnits) {
  const Dataset data = test::blobs(3, 40, 6, 7);
  HyperParams p;
  p.seed = 7;
  p.m = 200;
  p.rho = 8;
  p.pairs = 2;
  FlyNN model(p.resolve(6, 3), data.classes, 1);
  model.fit(data);
  const eval::ModelFileSummary s = summary_of(model);
  const FlyConfig& c = model.config();
  ASSERT_EQ(s.json["classes"].size(), 3u);
  for (std::size_t l = 0; l < 3; ++l) {
    const std::uint32_t* counts = model.counts().of_class(l);
    std::uint64_t units = 0, pair_cells = 0, pair_max = 0;
    for (std::uint32_t i = 0; i < c.m; ++i) units += counts[i] != 0;
    for (std::uint32_t i = c.m; i < c.cells(); ++i) {
      pair_cells += counts[i] != 0;
      pair_max = std::max<std::uint64_t>(pair_max, counts[i]);
    }
    const nlohmann::json& cls = s.json["classes"][l];
    EXPECT_EQ(cls["nonzero_units"], units);
    EXPECT_EQ(cls["nonzero_pair_cells"], pair_cells);
    EXPECT_EQ(cls["max_pair_count"], pair_max);
    EXPECT_GT(pair_cells, 0u);
  }
  EXPECT_NE(s.text.find(fmt::format("pairs:    {} pair cells per class after the 200 units\n", c.pair_cells())),
            std::string::npos) << s.text;
  EXPECT_NE(s.text.find("non-zero pair cells"), std::string::npos) << s.text;
}

// Without pairs the summary has no pair fields (a version-6 or older file has no pair cells).
TEST(ModelSummary, ModelsWithoutPairsHaveNoPairFields) {
  const Dataset data = test::blobs(3, 40, 6, 7);
  HyperParams p;
  p.seed = 7;
  FlyNN model(p.resolve(6, 3), data.classes, 1);
  model.fit(data);
  const eval::ModelFileSummary s = summary_of(model);
  for (const auto& cls : s.json["classes"]) EXPECT_FALSE(cls.contains("nonzero_pair_cells"));
  EXPECT_EQ(s.text.find("pair cells"), std::string::npos) << s.text;
}

}  // namespace
}  // namespace flynn
