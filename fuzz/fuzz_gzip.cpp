// libFuzzer target: the gzip reader behind every .gz data file.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    flynn::io::gunzip(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.gz");
  } catch (const flynn::Error&) {
  }
  return 0;
}
