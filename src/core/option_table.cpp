// The text of settings (flynn/option_table.hpp): canonical, displayed, parsed strictly.
#include "flynn/option_table.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn {

std::string setting_text(const SettingValue& value) {
  if (const auto* u = std::get_if<std::uint64_t>(&value)) return std::to_string(*u);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{:.17g}", *d);
  return std::get<std::string>(value);
}

std::string setting_display(const SettingValue& value) {
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{}", *d);
  return setting_text(value);
}

SettingValue parse_setting(SettingKind kind, std::string_view text, std::string_view name) {
  switch (kind) {
    case SettingKind::Unsigned: {
      std::uint64_t u = 0;
      const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), u);
      if (!digits || ec != std::errc() || end != text.data() + text.size())
        throw Error(fmt::format("{}: '{}' is not an unsigned integer in [0, {}]", name, text,
                                std::numeric_limits<std::uint64_t>::max()));
      return u;
    }
    case SettingKind::Real: {
      double d = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(d))
        throw Error(fmt::format("{}: '{}' is not a finite number", name, text));
      return d;
    }
    case SettingKind::Choice:
      if (text.empty()) throw Error(fmt::format("{}: an empty name", name));
      return std::string(text);
  }
  throw Error(fmt::format("{}: unknown kind of setting", name));
}

void wrong_setting_kind(std::string_view setting, SettingKind want) {
  throw Error(fmt::format("{}: expected a value of kind {}", setting, setting_kind_name(want)));
}

const char* setting_kind_name(SettingKind kind) {
  switch (kind) {
    case SettingKind::Unsigned: return "unsigned integer";
    case SettingKind::Real: return "number";
    case SettingKind::Choice: return "name";
  }
  return "?";
}

}  // namespace flynn
