#include "core/io/table_schema_codec.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

namespace flynn::io::detail {

namespace {
// Longest column name or category stored (the same bound as class names).
constexpr std::uint32_t kMaxNameBytes = 1u << 16;

std::string read_name(ByteReader& r, const char* what) {
  const std::uint32_t len = r.u32(what);
  if (len > kMaxNameBytes) r.fail(fmt::format("{} is {} bytes long", what, len));
  return std::string(r.bytes(len, what));
}
}  // namespace

void write_table_schema(ByteWriter& w, const TableSchema& s) {
  w.u8(s.named ? 1 : 0);
  w.str(s.label_name);
  w.str(s.id_name);
  w.u32(static_cast<std::uint32_t>(s.columns.size()));
  for (const TableColumn& c : s.columns) {
    w.str(c.name);
    w.u32(static_cast<std::uint32_t>(c.categories.size()));
    for (const std::string& cat : c.categories) w.str(cat);
  }
  w.u8(s.fill.empty() ? 0 : 1);
  for (float v : s.fill) w.f32(v);
}

TableSchema read_table_schema(ByteReader& r, std::uint32_t d) {
  TableSchema s;
  const std::uint8_t named = r.u8("table names flag");
  if (named > 1) r.fail(fmt::format("table names flag {} is not 0 or 1", named));
  s.named = named == 1;
  s.label_name = read_name(r, "label column name");
  s.id_name = read_name(r, "id column name");
  const std::uint32_t n = r.u32("table column count");
  // Each column takes at least 8 bytes: no allocation beyond what the file can hold.
  if (n == 0 || n > d || n > r.remaining() / 8)
    r.fail(fmt::format("table column count {} is invalid for d = {}", n, d));
  s.columns.resize(n);
  std::uint64_t width = 0;
  for (TableColumn& c : s.columns) {
    c.name = read_name(r, "column name");
    const std::uint32_t k = r.u32("category count");
    if (k > d || k > r.remaining() / 4) r.fail(fmt::format("category count {} is invalid", k));
    c.categories.reserve(k);
    for (std::uint32_t i = 0; i < k; ++i) c.categories.push_back(read_name(r, "category"));
    // Distinct, in any order: a CSV text column's are sorted, an ARFF nominal attribute's
    // keep the header's declared order.
    std::vector<std::string_view> sorted(c.categories.begin(), c.categories.end());
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      r.fail(fmt::format("the categories of column '{}' are not distinct", c.name));
    width += c.width();
  }
  if (width != d)
    r.fail(fmt::format("the table's columns describe {} features, the model has d = {}", width, d));
  const std::uint8_t has_fill = r.u8("fill flag");
  if (has_fill > 1) r.fail(fmt::format("fill flag {} is not 0 or 1", has_fill));
  if (has_fill) {
    if (d > r.remaining() / 4) r.fail("truncated model file (fill values)");
    s.fill.resize(d);
    for (std::uint32_t j = 0; j < d; ++j) {
      s.fill[j] = r.f32("fill value");
      if (!std::isfinite(s.fill[j])) r.fail(fmt::format("fill value of feature {} is not finite", j));
    }
  }
  return s;
}

}  // namespace flynn::io::detail
