#include "federated/relayed_text.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "federated/safety_switches.hpp"

namespace flynn::federated {

namespace {

// The length of the UTF-8 sequence starting at s[i] and its code point, or 0 when the
// bytes there are not well-formed UTF-8 (overlong forms, surrogates, beyond U+10FFFF).
std::size_t utf8_sequence(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  if (c >= 0xc2 && c <= 0xdf) n = 2, cp = c & 0x1f;
  else if (c >= 0xe0 && c <= 0xef) n = 3, cp = c & 0x0f;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return 0;
  return n;
}

// Characters that act on how a terminal lays text out without being controls: C1
// controls, bidirectional embeddings and isolates, zero-width characters, the line and
// paragraph separators, the byte-order mark.
bool acts_on_layout(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff;
}

}  // namespace

std::string inert_text(std::string_view text, std::size_t max_bytes) {
  if (!safety_check_on(SafetyCheck::InertText)) return std::string(text);
  const std::size_t shown = text.size() <= max_bytes ? text.size() : max_bytes;
  std::string out;
  out.reserve(shown + 16);
  for (std::size_t i = 0; i < shown;) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      if (c == '\\') out += '\\';
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t n = c >= 0x80 ? utf8_sequence(text, i, cp) : 0;
    if (n == 0 || i + n > shown) {
      out += fmt::format("\\x{:02x}", c);  // a control character, or not UTF-8
      ++i;
    } else if (acts_on_layout(cp)) {
      out += fmt::format("\\u{{{:04x}}}", cp);
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  if (shown < text.size()) out += fmt::format("… ({} more bytes)", text.size() - shown);
  return out;
}

std::string relayed_from(std::string_view who, std::string_view text, std::size_t max_bytes) {
  std::string inner = inert_text(text, max_bytes);
  // A quote inside is escaped too, so the quoted words cannot seem to end early.
  std::string quoted;
  quoted.reserve(inner.size() + 2);
  for (const char c : inner) {
    if (c == '"' && safety_check_on(SafetyCheck::InertText)) quoted += "\\\"";
    else quoted += c;
  }
  return fmt::format("{} says: \"{}\"", who, quoted);
}

}  // namespace flynn::federated
