#pragma once
// Party tables with one secret category and the public schema that covers them: the public
// schema's federation tests (tests/federated/dp_public_schema_test.cpp) and the CLI's
// (tests/cli/schema_test.cpp).
#include <cstddef>
#include <string>

#include <fmt/format.h>

namespace flynn::test {

// The category only party 1's first row holds.
inline constexpr const char* kSecret = "zebra-7f3a91";

// Party p's table: two numbers, a colour (one of the schema's) and a label; party 1's
// first row has the secret colour.
inline std::string party_table(int p, std::size_t rows = 30) {
  const char* colours[] = {"red", "green", "blue"};
  std::string t = "x,y,colour,label\n";
  for (std::size_t i = 0; i < rows; ++i) {
    const std::string colour = p == 1 && i == 0 ? kSecret : colours[(i + p) % 3];
    t += fmt::format("{},{},{},{}\n", (i % 5) + p, (i * 7) % 3, colour, i % 2 ? "a" : "b");
  }
  return t;
}

inline constexpr const char* kSchemaJson = R"({"format": "flynn table schema", "version": 1,
  "columns": [{"name": "x"}, {"name": "y"}, {"name": "colour", "categories": ["blue", "green", "red"]}],
  "label": "label"})";

}  // namespace flynn::test
