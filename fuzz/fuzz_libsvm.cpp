// libFuzzer target: flynn::io::parse_libsvm, with and without expected_features.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dataset_invariants.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (int v = 0; v < 2; ++v) {
    flynn::io::LoadOptions o;
    o.max_values = 1 << 20;
    if (v == 1) o.expected_features = 3;
    try {
      const flynn::Dataset d = flynn::io::parse_libsvm(text, o, "fuzz.svm");
      flynn::fuzz::check_dataset(d);
      flynn::fuzz::check(d.has_labels);
      if (o.expected_features) flynn::fuzz::check(d.n_features == *o.expected_features);
    } catch (const flynn::Error&) {
    }
  }
  return 0;
}
