// libFuzzer target: flynn::io::parse_csv under several option sets, and the feature
// statistics file (--feature-stats), which is a CSV of two rows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dataset_invariants.hpp"
#include "flynn/error.hpp"
#include "flynn/io/feature_stats_file.hpp"
#include "flynn/io/loaders.hpp"

namespace {

flynn::io::LoadOptions options(int variant) {
  using flynn::io::LabelColumn;
  using flynn::io::LoadOptions;
  LoadOptions o;
  o.max_values = 1 << 20;
  switch (variant) {
    case 0: break;  // defaults: auto header, label last, auto delimiter
    case 1:
      o.header = LoadOptions::Header::No;
      o.label_column.kind = LabelColumn::Kind::None;
      break;
    case 2:
      o.header = LoadOptions::Header::Yes;
      o.label_column.kind = LabelColumn::Kind::Index;
      o.label_column.index = 1;
      o.delimiter = ';';
      break;
    case 3:
      o.label_column.kind = LabelColumn::Kind::Name;
      o.label_column.name = "class";
      o.expected_features = 2;
      break;
    case 4:
      o.label_column.kind = LabelColumn::Kind::Index;
      o.label_column.index = -2;
      o.expected_features = 3;
      o.delimiter = '\t';
      break;
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (int v = 0; v < 5; ++v) {
    try {
      flynn::fuzz::check_dataset(flynn::io::parse_csv(text, options(v), "fuzz.csv"));
    } catch (const flynn::Error&) {
      // a clean rejection
    }
  }
  try {
    const flynn::FeatureStats s = flynn::io::parse_feature_stats(text, "fuzz.csv");
    if (s.mean.size() != s.scale.size()) __builtin_trap();
    for (float x : s.scale)
      if (!(x > 0.0f)) __builtin_trap();
  } catch (const flynn::Error&) {
    // a clean rejection
  }
  return 0;
}
