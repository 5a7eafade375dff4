#include "core/io/text_scanner.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>

#include "flynn/error.hpp"

namespace flynn::io::detail {

std::string_view strip_bom(std::string_view text) {
  if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
      static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF) {
    text.remove_prefix(3);
  }
  return text;
}

LineScanner::LineScanner(std::string_view text) : LineScanner(text, 0, true) {}

LineScanner::LineScanner(std::string_view text, std::uint64_t lines_before, bool at_start)
    : text_(at_start ? strip_bom(text) : text), line_(lines_before) {
  skipped_ = text.size() - text_.size();
}

bool LineScanner::next(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  const char* begin = text_.data() + pos_;
  const std::size_t rest = text_.size() - pos_;
  const void* nl = std::memchr(begin, '\n', rest);
  std::size_t len = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - begin) : rest;
  pos_ += nl ? len + 1 : len;
  if (len > 0 && begin[len - 1] == '\r') --len;
  line = std::string_view(begin, len);
  ++line_;
  return true;
}

std::string_view trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && is_blank_char(s[b])) ++b;
  while (e > b && is_blank_char(s[e - 1])) --e;
  return s.substr(b, e - b);
}

static char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// For a decimal string that from_chars rejected with result_out_of_range: true when its
// magnitude is huge (overflow), false when tiny (underflow). The decimal exponent of the
// leading significant digit decides; the text is known to be a well-formed number.
bool decimal_overflows(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  long long int_digits = 0, leading_frac_zeros = 0;
  bool seen_nonzero = false;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    if (s[i] != '0') seen_nonzero = true;
    if (seen_nonzero) ++int_digits;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      if (seen_nonzero) continue;
      if (s[i] == '0') {
        ++leading_frac_zeros;
      } else {
        seen_nonzero = true;
      }
    }
  }
  long long exp = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    for (; i < s.size() && is_digit(s[i]); ++i) {
      if (exp < 1000000000LL) exp = exp * 10 + (s[i] - '0');
    }
    if (neg) exp = -exp;
  }
  const long long magnitude = int_digits > 0 ? int_digits + exp : exp - leading_frac_zeros;
  return magnitude > 0;
}

}  // namespace

NumStatus parse_float(std::string_view s, float& out) {
  if (s.empty()) return NumStatus::Empty;
  const char* b = s.data();
  const char* const e = b + s.size();

  // Fast path: short integers (pixel values, counts, 0/1 flags) are most of the values in
  // typical data sets. Up to 9 digits fit in uint32 and convert to float with one correct
  // rounding, exactly like the double route below.
  {
    const char* p = b;
    const bool neg = *p == '-';
    if (neg || *p == '+') ++p;
    const std::ptrdiff_t n = e - p;
    if (n > 0 && n <= 9) {
      std::uint32_t v = 0;
      const char* q = p;
      for (; q < e && is_digit(*q); ++q) v = v * 10 + static_cast<std::uint32_t>(*q - '0');
      if (q == e) {
        const float f = static_cast<float>(v);
        out = (neg && v != 0) ? -f : f;
        return NumStatus::Ok;
      }
    }
  }

  if (*b == '+') {
    ++b;
    if (b == e || *b == '-' || *b == '+') return NumStatus::NotNumber;
  }
  double d = 0.0;
  const auto r = std::from_chars(b, e, d, std::chars_format::general);
  if (r.ec == std::errc::invalid_argument || r.ptr != e) return NumStatus::NotNumber;
  if (r.ec == std::errc::result_out_of_range) {
    if (decimal_overflows(std::string_view(b, static_cast<std::size_t>(e - b))))
      return NumStatus::OutOfRange;
    out = 0.0f;  // underflow: rounds to zero (the sign of a zero is not kept)
    return NumStatus::Ok;
  }
  if (std::isnan(d)) return NumStatus::NaN;
  if (std::isinf(d)) return NumStatus::Inf;
  if (std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max()))
    return NumStatus::OutOfRange;
  float f = static_cast<float>(d);
  if (f == 0.0f) f = 0.0f;  // -0 → +0
  out = f;
  return NumStatus::Ok;
}

bool parse_int64(std::string_view s, long long& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') {
    ++b;
    if (b == e || !is_digit(*b)) return false;
  }
  long long v = 0;
  const auto r = std::from_chars(b, e, v);
  if (r.ec != std::errc() || r.ptr != e) return false;
  out = v;
  return true;
}

std::string canonical_integer(std::string_view s) {
  std::size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (i == s.size()) return std::string(s);
  for (std::size_t j = i; j < s.size(); ++j)
    if (!is_digit(s[j])) return std::string(s);
  while (i + 1 < s.size() && s[i] == '0') ++i;
  std::string digits(s.substr(i));
  if (digits == "0") return digits;
  return neg ? "-" + digits : digits;
}

std::string quote_text(std::string_view s) {
  constexpr std::size_t kMax = 40;
  std::string r = "'";
  const bool cut = s.size() > kMax;
  if (cut) s = s.substr(0, kMax);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7F) {
      static const char* hex = "0123456789abcdef";
      r += "\\x";
      r += hex[u >> 4];
      r += hex[u & 15];
    } else {
      r += c;
    }
  }
  if (cut) r += "...";
  r += "'";
  return r;
}

std::string where(const std::string& source, std::uint64_t line) {
  return source + ":" + std::to_string(line) + ": ";
}

std::string where(const std::string& source, std::uint64_t line, std::size_t column) {
  return source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

void throw_bad_number(const std::string& source, std::uint64_t line, std::size_t column,
                      std::string_view text, NumStatus status) {
  std::string what;
  switch (status) {
    case NumStatus::Empty: what = "empty field, expected a number"; break;
    case NumStatus::NaN: what = "NaN is not allowed"; break;
    case NumStatus::Inf: what = "infinity (" + quote_text(text) + ") is not allowed"; break;
    case NumStatus::OutOfRange: what = quote_text(text) + " is out of float range"; break;
    case NumStatus::NotNumber:
    case NumStatus::Ok: what = quote_text(text) + " is not a number"; break;
  }
  throw Error(where(source, line, column) + what);
}

std::uint32_t LabelInterner::intern(std::string_view name) {
  if (has_last_ && name == last_name_) return last_id_;
  std::uint32_t id;
  if (auto it = ids_.find(name); it != ids_.end()) {
    id = it->second;
  } else {
    // A new spelling: several spellings of one canonical name ("1", "1.0") share its id.
    std::string canonical = canonical_label(name);
    if (auto c = canonical_ids_.find(canonical); c != canonical_ids_.end()) {
      id = c->second;
    } else {
      id = static_cast<std::uint32_t>(names_.size());
      names_.push_back(canonical);
      canonical_ids_.emplace(std::move(canonical), id);
    }
    ids_.emplace(std::string(name), id);
  }
  last_name_.assign(name);
  last_id_ = id;
  has_last_ = true;
  return id;
}

LabelSet LabelInterner::finish(std::vector<std::uint32_t>& labels) const {
  LabelSet set = LabelSet::sorted(names_);
  std::unordered_map<std::string_view, std::uint32_t> sorted_id;
  sorted_id.reserve(set.size());
  for (std::size_t i = 0; i < set.size(); ++i)
    sorted_id.emplace(set.name(i), static_cast<std::uint32_t>(i));
  std::vector<std::uint32_t> remap(names_.size());
  for (std::size_t i = 0; i < names_.size(); ++i) remap[i] = sorted_id.at(names_[i]);
  for (auto& l : labels) l = remap[l];
  return set;
}

}  // namespace flynn::io::detail

namespace flynn::io {

std::uint64_t sparse_value_limit(std::uint64_t input_bytes) {
  return (std::uint64_t{1} << 26) + input_bytes;
}

}  // namespace flynn::io

namespace flynn::io::detail {

std::uint64_t checked_cells(std::uint64_t n_rows, std::uint64_t n_features,
                            std::uint64_t max_values, const std::string& source) {
  std::uint64_t cells = 0;
  if (__builtin_mul_overflow(n_rows, n_features, &cells) || cells > max_values ||
      cells > std::numeric_limits<std::size_t>::max() / sizeof(float)) {
    throw Error(source + ": " + std::to_string(n_rows) + " rows x " + std::to_string(n_features) +
                " features is too large to load densely (limit " + std::to_string(max_values) +
                " values for this input); is a feature index or the attribute count corrupt?");
  }
  return cells;
}

}  // namespace flynn::io::detail
