// libFuzzer target: flynn::io::parse_arff under several option sets: training (numeric,
// nominal and string features, the learning pass of string attributes, sparse rows with
// nominal defaults) and prediction with a model's table schema.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dataset_invariants.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"

namespace {

flynn::io::LoadOptions options(int variant) {
  using flynn::io::LabelColumn;
  flynn::io::LoadOptions o;
  o.max_values = 1 << 20;
  switch (variant) {
    case 0: break;  // class = last attribute
    case 1: o.label_column.kind = LabelColumn::Kind::None; break;
    case 2:
      o.label_column.kind = LabelColumn::Kind::Name;
      o.label_column.name = "class";
      break;
    case 3:
      o.label_column.kind = LabelColumn::Kind::Index;
      o.label_column.index = 1;
      o.expected_features = 2;
      break;
    case 4: {
      // Prediction with a model's table: a numeric column and a one-hot one (the nominal
      // and string encodings at prediction), missing numbers filled with its mean.
      static const flynn::TableSchema model = [] {
        flynn::TableSchema s;
        s.columns = {{"", {}}, {"", {"p", "q"}}};
        s.fill = {0.5f, 0.0f, 0.0f};
        return s;
      }();
      o.schema = &model;
      o.expected_features = 3;
      break;
    }
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (int v = 0; v < 5; ++v) {
    try {
      flynn::fuzz::check_dataset(flynn::io::parse_arff(text, options(v), "fuzz.arff"));
    } catch (const flynn::Error&) {
    }
  }
  return 0;
}
