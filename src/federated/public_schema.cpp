#include "flynn/federated/public_schema.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flynn/error.hpp"
#include "flynn/imputation.hpp"
#include "flynn/io/table_columns.hpp"
#include "core/io/byte_codec.hpp"
#include "federated/openssl_util.hpp"

namespace flynn::federated {

namespace {

using nlohmann::json;

constexpr const char* kFormatName = "flynn table schema";
constexpr int kFormatVersion = 1;

// An unnamed table of numeric columns without fill values says no more than its width:
// such a schema is positional, so that {"features": d} and d unnamed numeric columns are
// one schema (one digest), as positional training keeps no table either.
void normalise(PublicSchema& s) {
  const TableSchema& t = s.table;
  if (!t.empty() && !t.named && !t.has_categorical() && t.fill.empty() && t.label_name.empty() &&
      t.id_name.empty())
    s.table = TableSchema{};
}

std::string text_at(const json& v, const std::string& what, const std::string& source) {
  if (!v.is_string()) throw Error(fmt::format("{}: {} must be a string", source, what));
  return v.get<std::string>();
}

TableColumn parse_column(const json& c, std::size_t k, const std::string& source) {
  const std::string where = fmt::format("column {}", k + 1);
  if (!c.is_object())
    throw Error(fmt::format("{}: {} must be an object such as {{\"name\": \"age\"}}", source, where));
  TableColumn col;
  for (const auto& [key, value] : c.items()) {
    if (key == "name") {
      col.name = text_at(value, where + "'s \"name\"", source);
      if (col.name.empty()) throw Error(fmt::format("{}: {} has an empty name", source, where));
    } else if (key == "categories") {
      if (!value.is_array() || value.empty())
        throw Error(fmt::format("{}: {}'s \"categories\" must be a non-empty list of strings", source, where));
      if (value.size() > TableColumn::kMaxCategories)
        throw Error(fmt::format("{}: {} lists {} categories, more than {}", source, where, value.size(),
                                TableColumn::kMaxCategories));
      std::set<std::string> seen;
      for (const json& v : value) {
        std::string cat = text_at(v, where + "'s categories", source);
        // Cells are trimmed before they are looked up, and a missing-cell spelling is a
        // missing cell: such a category could never be matched.
        const auto blank = [](char ch) { return ch == ' ' || ch == '\t'; };
        if (cat.empty() || blank(cat.front()) || blank(cat.back()) || is_missing_cell(cat))
          throw Error(fmt::format("{}: {} has the category \"{}\", which no cell can hold (empty, "
                                  "surrounded by spaces, or a missing-value spelling)",
                                  source, where, cat));
        if (!seen.insert(cat).second)
          throw Error(fmt::format("{}: {} lists the category \"{}\" twice", source, where, cat));
        col.categories.push_back(std::move(cat));
      }
    } else {
      throw Error(fmt::format("{}: {} has the unknown key \"{}\" (expected \"name\", \"categories\")",
                              source, where, key));
    }
  }
  return col;
}

}  // namespace

namespace {

// The document's object after its "format" and "version" (checked).
json schema_document(std::string_view text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: not a JSON schema file: {}", source, e.what()));
  }
  if (!doc.is_object()) throw Error(fmt::format("{}: a schema file holds one JSON object", source));
  if (!doc.contains("format") || doc["format"] != kFormatName)
    throw Error(fmt::format("{}: not a flynn schema file (\"format\" must be \"{}\"; `flynn schema` "
                            "writes one)", source, kFormatName));
  if (!doc.contains("version") || doc["version"] != kFormatVersion)
    throw Error(fmt::format("{}: schema file version {}; this flynn reads version {}", source,
                            doc.contains("version") ? doc["version"].dump() : "(none)", kFormatVersion));
  return doc;
}

std::vector<float> fill_values(const json& value, const std::string& source) {
  if (!value.is_array()) throw Error(fmt::format("{}: \"fill\" must be a list of numbers", source));
  std::vector<float> fill;
  for (std::size_t j = 0; j < value.size(); ++j) {
    if (!value[j].is_number()) throw Error(fmt::format("{}: fill value {} is not a number", source, j + 1));
    const double v = value[j].get<double>();
    if (!std::isfinite(v) || std::fabs(v) > std::numeric_limits<float>::max())
      throw Error(fmt::format("{}: fill value {} is not a finite float", source, j + 1));
    fill.push_back(static_cast<float>(v));
  }
  return fill;
}

// The keys after "format" and "version"; `features` gets "features" when given.
PublicSchema schema_keys(const json& doc, const std::string& source, std::optional<std::size_t>& features) {
  PublicSchema s;
  for (const auto& [key, value] : doc.items()) {
    if (key == "format" || key == "version") continue;
    if (key == "columns") {
      if (!value.is_array()) throw Error(fmt::format("{}: \"columns\" must be a list", source));
      for (std::size_t k = 0; k < value.size(); ++k) s.table.columns.push_back(parse_column(value[k], k, source));
    } else if (key == "label") {
      s.table.label_name = text_at(value, "\"label\"", source);
    } else if (key == "id") {
      s.table.id_name = text_at(value, "\"id\"", source);
    } else if (key == "fill") {
      s.table.fill = fill_values(value, source);
    } else if (key == "features") {
      if (!value.is_number_unsigned() || value.get<std::uint64_t>() < 1 ||
          value.get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
        throw Error(fmt::format("{}: \"features\" must be a whole number in [1, 2^32 - 1]", source));
      features = value.get<std::size_t>();
    } else {
      throw Error(fmt::format("{}: unknown key \"{}\" (expected \"columns\", \"label\", \"id\", "
                              "\"fill\", \"features\")", source, key));
    }
  }
  return s;
}

// A table's columns: all named or none, distinct names, label and id apart from them.
void check_column_names(TableSchema& t, const std::string& source) {
  std::size_t named = 0;
  for (const TableColumn& c : t.columns) named += !c.name.empty();
  if (named != 0 && named != t.columns.size())
    throw Error(fmt::format("{}: either every column has a \"name\" or none has ({} of {} do)", source,
                            named, t.columns.size()));
  t.named = named != 0;
  if (t.named) {
    std::set<std::string> names;
    for (const TableColumn& c : t.columns)
      if (!names.insert(c.name).second)
        throw Error(fmt::format("{}: two columns are named \"{}\"", source, c.name));
    if (names.count(t.label_name) || names.count(t.id_name))
      throw Error(fmt::format("{}: the label or id column is also a feature column", source));
    if (!t.label_name.empty() && t.label_name == t.id_name)
      throw Error(fmt::format("{}: the label and the id column are both \"{}\"", source, t.label_name));
  } else if (!t.label_name.empty() || !t.id_name.empty()) {
    throw Error(fmt::format("{}: \"label\" and \"id\" name columns of a named table; these columns "
                            "have no names (the label is found by position, or --label-col)", source));
  }
}

}  // namespace

PublicSchema parse_public_schema(std::string_view text, const std::string& source) {
  std::optional<std::size_t> features;
  PublicSchema s = schema_keys(schema_document(text, source), source, features);
  TableSchema& t = s.table;
  if (t.columns.empty()) {
    if (!features)
      throw Error(fmt::format("{}: give the table's \"columns\", or \"features\" (d) for positional data", source));
    if (!t.label_name.empty() || !t.id_name.empty() || !t.fill.empty())
      throw Error(fmt::format("{}: \"label\", \"id\" and \"fill\" need \"columns\"", source));
    s.features = *features;
    return s;
  }
  check_column_names(t, source);
  s.features = t.n_features();
  if (features && *features != s.features)
    throw Error(fmt::format("{}: \"features\" is {}, but the columns make {} features", source, *features,
                            s.features));
  if (s.features > std::numeric_limits<std::uint32_t>::max())
    throw Error(fmt::format("{}: {} features is more than 2^32 - 1", source, s.features));
  if (!t.fill.empty() && t.fill.size() != s.features)
    throw Error(fmt::format("{}: {} fill values for {} features", source, t.fill.size(), s.features));
  normalise(s);
  return s;
}

PublicSchema load_public_schema(const std::string& path, std::uint64_t max_bytes) {
  return parse_public_schema(io::read_file(path, max_bytes), path);
}

std::string public_schema_json(const PublicSchema& s) {
  json doc = json::object();
  doc["format"] = kFormatName;
  doc["version"] = kFormatVersion;
  const TableSchema& t = s.table;
  if (!t.empty()) {
    json cols = json::array();
    for (const TableColumn& c : t.columns) {
      json col = json::object();
      if (t.named) col["name"] = c.name;
      if (c.categorical()) col["categories"] = c.categories;
      cols.push_back(col);
    }
    doc["columns"] = cols;
    if (!t.label_name.empty()) doc["label"] = t.label_name;
    if (!t.id_name.empty()) doc["id"] = t.id_name;
    // As doubles: a float converts exactly, and the shortest double text reads back to it.
    if (!t.fill.empty()) {
      json fill = json::array();
      for (float v : t.fill) fill.push_back(static_cast<double>(v));
      doc["fill"] = fill;
    }
  }
  doc["features"] = s.features;
  return doc.dump(2) + "\n";
}

PublicSchema public_schema_of(const Dataset& sample, bool with_fill) {
  PublicSchema s;
  s.table = sample.schema;
  s.features = sample.n_features;
  s.table.fill.clear();
  if (with_fill) {
    if (s.table.empty())
      throw Error(fmt::format("{}: fill values need a table (CSV or ARFF columns)", sample.source));
    s.table.fill = ImputationSums::of(sample).means();
  }
  normalise(s);
  return s;
}

std::string public_schema_digest(const PublicSchema& s) {
  // A canonical encoding of every field, then SHA-256: equal digests mean equal schemas.
  io::ByteWriter w;
  w.str("flynn public schema 1");
  w.u64(s.features);
  const TableSchema& t = s.table;
  w.u8(t.named ? 1 : 0);
  w.str(t.label_name);
  w.str(t.id_name);
  w.u64(t.columns.size());
  for (const TableColumn& c : t.columns) {
    w.str(c.name);
    w.u64(c.categories.size());
    for (const std::string& cat : c.categories) w.str(cat);
  }
  w.u64(t.fill.size());
  for (float v : t.fill) w.f32(v);
  return fmt::format("d={}, sha256={}", s.features, ossl::hex(ossl::sha256(w.data()).substr(0, 12)));
}

io::LoadOptions public_schema_load_options(io::LoadOptions options, const PublicSchema& schema) {
  options.schema = schema.table.empty() ? nullptr : &schema.table;
  options.expected_features = schema.features;
  return options;
}

void check_fits_public_schema(const Dataset& data, const PublicSchema& schema) {
  if (data.n_features != schema.features)
    throw Error(fmt::format("the data has {} features, the public schema (--schema) {}", data.n_features,
                            schema.features));
  const TableSchema& t = schema.table;
  const TableSchema& mine = data.schema;
  const bool fits = t.empty() ? !mine.has_categorical()
                              : mine.columns == t.columns && mine.named == t.named &&
                                    mine.label_name == t.label_name && mine.fill == t.fill;
  if (!fits)
    throw Error("the data was not read against the public schema (--schema): its columns or "
                "categories are its own (read it with federated::public_schema_load_options)");
}

}  // namespace flynn::federated
