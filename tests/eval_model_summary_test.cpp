// The model file summary (`flynn info`): counts, format version, checksum and footprint of
// a small model, as JSON and as text.
#include <gtest/gtest.h>

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
  test::TempDir dir;
  const std::string path = dir.file("m.flynn");
  io::save_model(model, path);
  const std::string bytes = io::read_model_file(path);

  const experiments::ModelFileSummary s =
      experiments::model_file_summary(path, io::kDefaultMaxInputBytes, {0, ModelUse::Inspect});
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

}  // namespace
}  // namespace flynn
