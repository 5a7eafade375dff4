// libFuzzer target: the public schema's JSON (flynn/federated/public_schema.hpp), which
// every party reads under DP and whose digest the parties compare: either it parses or it
// is refused with flynn::Error; what parses is written back (public_schema_json) to JSON
// that parses to the same schema (the same digest).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "flynn/error.hpp"
#include "flynn/federated/public_schema.hpp"

namespace fed = flynn::federated;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  try {
    const fed::PublicSchema schema = fed::parse_public_schema(json, "fuzz");
    const fed::PublicSchema again = fed::parse_public_schema(fed::public_schema_json(schema), "again");
    if (fed::public_schema_digest(again) != fed::public_schema_digest(schema)) std::abort();
  } catch (const flynn::Error&) {
  }
  return 0;
}
