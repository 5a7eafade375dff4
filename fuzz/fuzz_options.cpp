// libFuzzer target: the parsers behind the CLI's option values. The input is split at
// its first byte into a selector and a text; each parser must either accept the text or
// throw flynn::Error (or, for the integer rule, return a reason), never crash, and what
// it accepts must be consistent: a strict integer is rewritten to canonical decimal that
// the rule accepts again unchanged, and byte sizes are at least 1.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/value_parsing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (selector % 8) {
      case 0:
      case 1: {
        const bool is_signed = selector % 2;
        std::string value = text;
        if (flynn::check_strict_integer(value, is_signed).empty()) {
          std::string again = value;
          if (!flynn::check_strict_integer(again, is_signed).empty() || again != value)
            std::abort();
        }
        break;
      }
      case 2:
        if (flynn::parse_byte_size(text, "--max-input-bytes") == 0) std::abort();
        break;
      case 3:
        flynn::io::LabelColumn::parse(text);
        break;
      case 4:
        flynn::io::parse_format(text);
        flynn::io::detect_format(text);
        break;
      case 5:
        flynn::parse_variant(text);
        break;
      case 6:
        flynn::parse_preprocess(text);
        break;
      case 7: {
        const flynn::LabelSet labels = flynn::LabelSet::parse_list(text);
        for (const std::string& name : labels.names())
          if (flynn::canonical_label(name) != name) std::abort();  // --labels are canonical
        break;
      }
    }
  } catch (const flynn::Error&) {
  }
  return 0;
}
