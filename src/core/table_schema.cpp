#include "flynn/table_schema.hpp"

#include <string>

#include "flynn/error.hpp"

namespace flynn {

namespace {
bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}
}  // namespace

MissingPolicy parse_missing_policy(std::string_view text) {
  if (iequal(text, "error")) return MissingPolicy::Error;
  if (iequal(text, "mean")) return MissingPolicy::Mean;
  if (iequal(text, "zero")) return MissingPolicy::Zero;
  throw Error("--missing: '" + std::string(text) + "' is not one of error, mean, zero");
}

const char* missing_policy_name(MissingPolicy policy) {
  switch (policy) {
    case MissingPolicy::Error: return "error";
    case MissingPolicy::Mean: return "mean";
    case MissingPolicy::Zero: return "zero";
  }
  return "?";
}

bool is_missing_cell(std::string_view t) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\r')) t.remove_suffix(1);
  return t.empty() || t == "?" || iequal(t, "na") || iequal(t, "nan");
}

std::size_t TableSchema::n_features() const {
  std::size_t d = 0;
  for (const TableColumn& c : columns) d += c.width();
  return d;
}

bool TableSchema::has_categorical() const {
  for (const TableColumn& c : columns)
    if (c.categorical()) return true;
  return false;
}

std::vector<std::size_t> TableSchema::offsets() const {
  std::vector<std::size_t> out;
  out.reserve(columns.size() + 1);
  std::size_t at = 0;
  for (const TableColumn& c : columns) {
    out.push_back(at);
    at += c.width();
  }
  out.push_back(at);
  return out;
}

std::string TableSchema::feature_name(std::size_t j) const {
  std::size_t at = 0;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const TableColumn& c = columns[k];
    if (j < at + c.width()) {
      const std::string base = c.name.empty() ? "column " + std::to_string(k + 1) : c.name;
      return c.categorical() ? base + "=" + c.categories[j - at] : base;
    }
    at += c.width();
  }
  return "feature " + std::to_string(j + 1);
}

}  // namespace flynn
