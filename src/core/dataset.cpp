#include "flynn/dataset.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "flynn/error.hpp"
#include "flynn/io/load_notes.hpp"

namespace flynn {

namespace {

// Quoted for messages: control bytes shown as \xNN (a NUL would end the message), long
// names cut.
std::string quote(std::string_view s) {
  constexpr std::size_t kMax = 80;
  std::string r = "'";
  for (std::size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u < 0x20 || u == 0x7F) {
      static const char* hex = "0123456789abcdef";
      r += "\\x";
      r += hex[u >> 4];
      r += hex[u & 15];
    } else {
      r += s[i];
    }
  }
  if (s.size() > kMax) r += "...";
  return r + "'";
}

// An integer name: optional sign, then one or more decimal digits (any length).
bool is_integer_name(std::string_view s) {
  std::size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// Numeric comparison of two integer names of any length (no overflow): sign, then number
// of significant digits, then the digits. Equal values ("1", "+1", "01") compare equal.
int compare_integer_names(std::string_view a, std::string_view b) {
  auto split = [](std::string_view s, bool& neg) {
    neg = s[0] == '-';
    if (s[0] == '-' || s[0] == '+') s.remove_prefix(1);
    while (s.size() > 1 && s[0] == '0') s.remove_prefix(1);
    if (s == "0") neg = false;
    return s;
  };
  bool na = false, nb = false;
  const std::string_view da = split(a, na), db = split(b, nb);
  if (na != nb) return na ? -1 : 1;
  int mag = 0;
  if (da.size() != db.size()) {
    mag = da.size() < db.size() ? -1 : 1;
  } else {
    const int c = da.compare(db);
    mag = c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  return na ? -mag : mag;
}

std::string list_for_message(const LabelSet& set) {
  constexpr std::size_t kMax = 12;
  std::string r;
  for (std::size_t i = 0; i < set.size() && i < kMax; ++i) {
    if (i) r += ",";
    r += set.name(i);
  }
  if (set.size() > kMax) r += ",... (" + std::to_string(set.size()) + " classes)";
  return r;
}

std::string origin(const Dataset& d, std::size_t row) {
  const std::string src = d.source.empty() ? std::string("<memory>") : d.source;
  if (row < d.row_origin.size()) return src + ":" + std::to_string(d.row_origin[row]);
  return src + ": row " + std::to_string(row + 1);
}

}  // namespace

std::string canonical_label(std::string_view s) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const std::size_t digits_begin = i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  const std::size_t digits_end = i;
  if (digits_end == digits_begin) return std::string(s);
  if (i < s.size()) {
    if (s[i] != '.') return std::string(s);
    ++i;
    if (i == s.size()) return std::string(s);  // "1." is not a spelling we rewrite
    for (; i < s.size(); ++i)
      if (s[i] != '0') return std::string(s);
  }
  std::size_t first = digits_begin;
  while (first + 1 < digits_end && s[first] == '0') ++first;
  std::string digits(s.substr(first, digits_end - first));
  if (digits == "0" || !negative) return digits;
  return "-" + digits;
}

LabelSet::LabelSet(std::vector<std::string> names) : names_(std::move(names)) {
  std::unordered_set<std::string_view> seen;
  seen.reserve(names_.size());
  for (const auto& n : names_) {
    if (n.empty()) throw Error("empty class name in the label list");
    if (n.size() > kMaxNameBytes)
      throw Error("class name " + quote(n) + " is " + std::to_string(n.size()) +
                  " bytes long; at most " + std::to_string(kMaxNameBytes) + " are allowed");
    for (const char c : n) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7F)
        throw Error("class name " + quote(n) + " holds a control character (byte " +
                    std::to_string(u) + "); class names must be printable");
    }
    if (!seen.insert(n).second)
      throw Error("duplicate class name " + quote(n) + " in the label list");
  }
}

LabelSet LabelSet::sorted(std::vector<std::string> names) {
  const bool numeric =
      !names.empty() && std::all_of(names.begin(), names.end(),
                                    [](const std::string& n) { return is_integer_name(n); });
  if (numeric) {
    // Ties between different spellings of one value ("1", "01") fall back to bytes so the
    // order is total and deterministic.
    std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
      const int c = compare_integer_names(a, b);
      return c != 0 ? c < 0 : a < b;
    });
  } else {
    std::sort(names.begin(), names.end());
  }
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return LabelSet(std::move(names));
}

LabelSet LabelSet::parse_list(const std::string& comma_separated) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = comma_separated.find(',', start);
    std::string_view item(comma_separated);
    item = item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item.empty()) throw Error("empty item in the label list " + quote(comma_separated));
    names.push_back(canonical_label(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return LabelSet(std::move(names));
}

long LabelSet::find(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  return it == names_.end() ? -1 : static_cast<long>(it - names_.begin());
}

std::string LabelSet::joined() const {
  std::string r;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (i) r += ",";
    r += names_[i];
  }
  return r;
}

std::vector<std::uint32_t> Dataset::class_ids_in(const LabelSet& target) const {
  // Names match by their canonical spelling, so that a model written before labels were
  // normalised ("1.0") still accepts today's data ("1").
  std::unordered_map<std::string, std::uint32_t> target_id;
  target_id.reserve(target.size());
  for (std::size_t i = 0; i < target.size(); ++i)
    target_id.emplace(canonical_label(target.name(i)), static_cast<std::uint32_t>(i));
  constexpr std::uint32_t kMissing = 0xFFFFFFFFu;
  std::vector<std::uint32_t> remap(classes.size(), kMissing);
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto it = target_id.find(canonical_label(classes.name(i)));
    if (it != target_id.end()) remap[i] = it->second;
  }
  for (std::size_t r = 0; r < labels.size(); ++r) {
    FLYNN_ASSERT(labels[r] < remap.size());
    if (remap[labels[r]] == kMissing) {
      throw Error(origin(*this, r) + ": label " + quote(classes.name(labels[r])) +
                  " is not one of the known classes (" + list_for_message(target) + ")");
    }
  }
  return remap;
}

std::vector<std::uint32_t> Dataset::row_class_ids_in(const LabelSet& target) const {
  const std::vector<std::uint32_t> remap = class_ids_in(target);
  std::vector<std::uint32_t> ids(labels.size());
  for (std::size_t r = 0; r < labels.size(); ++r) ids[r] = remap[labels[r]];
  return ids;
}

void Dataset::relabel(const LabelSet& target) {
  // class_ids_in checks every row before anything changes: a failed relabel leaves the
  // data as it was.
  if (has_labels) labels = row_class_ids_in(target);
  classes = target;
}

Dataset Dataset::subset(const std::vector<std::size_t>& rows) const {
  Dataset out;
  out.source = source;
  out.n_features = n_features;
  out.n_rows = rows.size();
  out.has_labels = has_labels;
  out.classes = classes;
  out.schema = schema;
  out.features.resize(rows.size() * n_features);
  if (!row_ids.empty()) out.row_ids.reserve(rows.size());
  if (has_labels) out.labels.reserve(rows.size());
  if (!row_origin.empty()) out.row_origin.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t r = rows[i];
    FLYNN_ASSERT(r < n_rows);
    std::copy_n(row(r), n_features, out.row(i));
    if (has_labels) out.labels.push_back(labels[r]);
    if (!row_origin.empty()) out.row_origin.push_back(row_origin[r]);
    if (!row_ids.empty()) out.row_ids.push_back(row_ids[r]);
  }
  return out;
}

void Dataset::append(const Dataset& other) {
  const bool this_blank = n_rows == 0 && n_features == 0 && features.empty() && classes.empty();
  if (this_blank) {
    std::string keep_source = source;
    *this = other;
    if (!keep_source.empty()) source = keep_source;
    return;
  }
  if (other.n_rows == 0) return;
  if (other.n_features != n_features) {
    throw Error("cannot append " + other.source + " (" + std::to_string(other.n_features) +
                " features) to " + source + " (" + std::to_string(n_features) + " features)");
  }
  if (n_rows > 0 && other.has_labels != has_labels) {
    throw Error("cannot append " + other.source + " to " + source +
                ": one has labels, the other not");
  }
  if (n_rows == 0) has_labels = other.has_labels;

  std::vector<std::uint32_t> other_ids;
  if (other.has_labels) {
    // Keep this set (and its order, which may be a model's) unless it must grow.
    bool grows = false;
    for (const auto& n : other.classes.names())
      if (classes.find(n) < 0) grows = true;
    if (grows) {
      std::vector<std::string> all = classes.names();
      all.insert(all.end(), other.classes.names().begin(), other.classes.names().end());
      LabelSet merged = LabelSet::sorted(std::move(all));
      for (auto& l : labels) l = static_cast<std::uint32_t>(merged.find(classes.name(l)));
      classes = std::move(merged);
    }
    other_ids.resize(other.classes.size());
    for (std::size_t i = 0; i < other.classes.size(); ++i)
      other_ids[i] = static_cast<std::uint32_t>(classes.find(other.classes.name(i)));
  }

  // row_origin stays aligned with the rows even if one side lacks it (0 = unknown).
  if (row_origin.size() != n_rows) row_origin.resize(n_rows, 0);
  features.insert(features.end(), other.features.begin(), other.features.end());
  if (other.has_labels)
    for (auto l : other.labels) labels.push_back(other_ids.at(l));
  if (other.row_origin.size() == other.n_rows) {
    row_origin.insert(row_origin.end(), other.row_origin.begin(), other.row_origin.end());
  } else {
    row_origin.resize(n_rows + other.n_rows, 0);
  }
  if (row_ids.size() == n_rows && other.row_ids.size() == other.n_rows && !row_ids.empty() &&
      !other.row_ids.empty())
    row_ids.insert(row_ids.end(), other.row_ids.begin(), other.row_ids.end());
  else
    row_ids.clear();
  n_rows += other.n_rows;
  if (source != other.source && !other.source.empty()) {
    source = source.empty() ? other.source : source + "+" + other.source;
  }
}

std::vector<std::uint64_t> rows_per_class(const std::vector<std::uint32_t>& labels,
                                          std::size_t n_classes) {
  std::vector<std::uint64_t> rows(n_classes, 0);
  for (std::uint32_t y : labels) {
    if (y >= n_classes)
      throw Error("class sizes: label " + std::to_string(y) + " outside [0, " + std::to_string(n_classes) + ")");
    ++rows[y];
  }
  return rows;
}

std::vector<std::size_t> Dataset::class_sizes() const {
  if (!has_labels)
    throw Error((source.empty() ? std::string("<memory>") : source) + ": the data has no labels");
  const std::vector<std::uint64_t> rows = rows_per_class(labels, classes.size());
  return {rows.begin(), rows.end()};
}

void Dataset::require_trainable() const {
  const std::string src = source.empty() ? std::string("<memory>") : source;
  if (!has_labels) throw Error(src + ": the data has no labels; training needs a class per row");
  if (n_rows == 0) throw Error(src + ": no rows to train on");
  const auto sizes = class_sizes();
  std::size_t populated = 0, which = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] > 0) {
      ++populated;
      which = i;
    }
  if (populated < 2) {
    throw Error(src + ": all " + std::to_string(n_rows) + " rows have the class " +
                quote(classes.name(which)) + "; training needs at least two classes");
  }
  const std::string warning = label_column_warning(src, schema.label_name, {sizes.begin(), sizes.end()});
  if (!warning.empty()) io::send_warning(warning);
}

std::string label_column_warning(const std::string& source, const std::string& column,
                                 const std::vector<std::uint64_t>& rows_per_class) {
  std::uint64_t n = 0, classes = 0, single = 0;
  for (std::uint64_t c : rows_per_class) {
    n += c;
    classes += c > 0;
    single += c == 1;
  }
  std::string why;
  if (n >= 10 && 2 * classes > n) {
    why = std::to_string(classes) + " classes for " + std::to_string(n) + " rows: most rows have a class of their own";
  } else if (single >= 10 && 4 * single >= classes) {
    why = std::to_string(classes) + " classes, " + std::to_string(single) + " of them with a single row";
  } else {
    return "";
  }
  const std::string name = column.empty() ? std::string("the label column") : "the label column " + quote(column);
  return source + ": " + name + " has " + why +
         ". Is it the class? Choose the label column with --label-col (by name or number).";
}

}  // namespace flynn
