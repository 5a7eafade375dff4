// libFuzzer target: flynn::io::parse_idx.
//
// Input layout: two bytes (big-endian) giving the length L of a labels file, then L bytes
// of labels (fewer if the input ends), then the images file. The whole input is also
// parsed as an unlabelled images file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dataset_invariants.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"

namespace {

void parse(std::string_view images, std::string_view labels) {
  try {
    const flynn::Dataset d = flynn::io::parse_idx(images, labels, "fuzz-images", "fuzz-labels");
    flynn::fuzz::check_dataset(d);
    flynn::fuzz::check(d.has_labels == !labels.empty());
  } catch (const flynn::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  parse(all, {});
  if (size >= 2) {
    const std::size_t len = std::min<std::size_t>(std::size_t{data[0]} << 8 | data[1], size - 2);
    parse(all.substr(2 + len), all.substr(2, len));
  }
  return 0;
}
