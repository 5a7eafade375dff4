#pragma once
// Value parsers for command-line style text: byte sizes (the CLI's --max-input-bytes) and
// the strict integer rule every integer option of the CLI follows. In flynn::core, not the
// CLI, so they need no CLI11 and the fuzz build (which builds no CLI) reaches them through
// fuzz/fuzz_options.cpp.
#include <cstdint>
#include <string>

namespace flynn {

/// Parses "123", "64K", "64M", "4G", "1T" (binary multiples, case-insensitive, an optional
/// trailing "B"/"iB") into bytes. Throws flynn::Error naming `flag` when the text is not
/// such a size, is 0, or does not fit in 64 bits.
std::uint64_t parse_byte_size(const std::string& text, const std::string& flag);

/// The strict integer rule: `value` must be a plain decimal integer (an optional '+'; '-'
/// only when `is_signed`) within the 64-bit range of its kind. On success rewrites `value`
/// in canonical decimal ("010" -> "10", "+7" -> "7", "-0" -> "0") and returns "";
/// otherwise returns the reason, e.g. "18446744073709551616 is out of range: must be in
/// [0, 18446744073709551615]".
std::string check_strict_integer(std::string& value, bool is_signed);

}  // namespace flynn
