#include "flynn/value_parsing.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn {

std::uint64_t parse_byte_size(const std::string& text, const std::string& flag) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  std::string suffix(ptr, end);
  for (char& ch : suffix) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (suffix.size() > 1 && suffix.back() == 'B') suffix.pop_back();
  if (suffix.size() > 1 && suffix.back() == 'I') suffix.pop_back();
  static const std::string kUnits = "KMGT";
  const std::size_t unit = suffix.empty() ? std::string::npos : kUnits.find(suffix);
  if (ptr == text.data() || (ec != std::errc() && ec != std::errc::result_out_of_range) ||
      (!suffix.empty() && suffix != "B" && (suffix.size() != 1 || unit == std::string::npos)))
    throw Error(fmt::format("{}: '{}' is not a size (a byte count such as 1048576, or 64M, 4G)",
                            flag, text));
  const int shift = unit == std::string::npos ? 0 : 10 * (static_cast<int>(unit) + 1);
  if (ec == std::errc::result_out_of_range || (shift && value > (~std::uint64_t{0} >> shift)))
    throw Error(fmt::format("{}: '{}' does not fit in 64 bits", flag, text));
  value <<= shift;
  if (value == 0) throw Error(fmt::format("{}: must be at least 1 byte", flag));
  return value;
}

// CLI11 2.1 converts integers with strtoull/strtoll in base 0, which saturates on overflow,
// wraps "-1" into 2^64 - 1 and reads "010" as octal: this check runs first and leaves it
// only canonical decimal text.
std::string check_strict_integer(std::string& value, bool is_signed) {
  const std::string range =
      is_signed ? fmt::format("[{}, {}]", std::numeric_limits<std::int64_t>::min(),
                              std::numeric_limits<std::int64_t>::max())
                : fmt::format("[0, {}]", std::numeric_limits<std::uint64_t>::max());
  std::string_view digits = value;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  const bool all_digits = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char ch) {
    return ch >= '0' && ch <= '9';
  });
  if (!all_digits) return fmt::format("'{}' is not a decimal integer", value);
  if (negative && !is_signed) return fmt::format("{} is out of range: must be in {}", value, range);
  std::uint64_t magnitude = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  const std::uint64_t limit = !is_signed  ? std::numeric_limits<std::uint64_t>::max()
                              : negative ? std::uint64_t{1} << 63
                                         : (std::uint64_t{1} << 63) - 1;
  if (ec != std::errc() || ptr != digits.data() + digits.size() || magnitude > limit)
    return fmt::format("{} is out of range: must be in {}", value, range);
  value = std::to_string(magnitude);
  if (negative && magnitude) value.insert(value.begin(), '-');
  return {};
}

}  // namespace flynn
