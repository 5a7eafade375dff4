#pragma once
// The rows of settings that travel (flynn/option_table.hpp), made from the member they set:
// typed access without a hand-written getter and setter per row. The hyper-parameters'
// table (settings_table.cpp) and the DP settings' (federated/dp_settings.cpp) are made with
// these, so a setting's flag, help, wire name, kind and fingerprint name are one row.
//
//   setting_row<&HyperParams::m, "m">({"--m", "FlyHash dimension m"})
//   choice_row<&DpParams::unit, "dp_unit", parse_dp_unit, dp_unit_name>({"--dp-unit", ...})
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "flynn/error.hpp"
#include "flynn/option_table.hpp"

namespace flynn::detail {

/// A setting's name as a template argument, so that a row's captureless setter can name
/// its setting in errors.
template <std::size_t N>
struct SettingName {
  char text[N];
  constexpr SettingName(const char (&s)[N]) {  // NOLINT: implicit, for "m" as an argument
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};

/// What a setting row shows besides its name: the CLI flag and help, and where it goes in
/// the federation's fingerprint (null: not in it).
struct SettingPresentation {
  const char* flag;
  std::string help;
  const char* fingerprint = nullptr;
  const char* fingerprint_omitted_at = nullptr;
  bool enables = false;
};

template <class M>
struct MemberOf;
template <class C, class V>
struct MemberOf<V C::*> {
  using Class = C;
  using Value = V;
};
template <class V>
struct Unoptional {
  using Type = V;
};
template <class V>
struct Unoptional<std::optional<V>> {
  using Type = V;
};

template <auto Member>
using ClassOf = typename MemberOf<decltype(Member)>::Class;
template <auto Member>
using ValueOf = typename Unoptional<typename MemberOf<decltype(Member)>::Value>::Type;

/// The member's value, or none for an unset optional member.
template <auto Member>
std::optional<ValueOf<Member>> member_value(const ClassOf<Member>& t) {
  return t.*Member;
}

template <class T>
OptionField<T> setting_field(const char* name, SettingKind kind, SettingPresentation p) {
  OptionField<T> f;
  f.flag = p.flag;
  f.help = std::move(p.help);
  f.name = name;
  f.kind = kind;
  f.fingerprint = p.fingerprint;
  f.fingerprint_omitted_at = p.fingerprint_omitted_at;
  f.enables = p.enables;
  return f;
}

/// A row for a numeric member (an unsigned integer or a double, optional or not): Unsigned
/// for an integer (a value above a narrower member's range is an error naming the
/// setting), Real for a double.
template <auto Member, SettingName Name>
OptionField<ClassOf<Member>> setting_row(SettingPresentation p) {
  using T = ClassOf<Member>;
  using V = ValueOf<Member>;
  static_assert(std::is_floating_point_v<V> || std::is_unsigned_v<V>);
  using Text = std::conditional_t<std::is_floating_point_v<V>, double, std::uint64_t>;
  OptionField<T> f =
      setting_field<T>(Name.text, std::is_floating_point_v<V> ? SettingKind::Real : SettingKind::Unsigned,
                       std::move(p));
  f.get = [](const T& t) -> std::optional<SettingValue> {
    const std::optional<V> v = member_value<Member>(t);
    if (!v) return std::nullopt;
    return SettingValue(static_cast<Text>(*v));
  };
  f.set = [](T& t, const SettingValue& value) {
    const Text v = setting_as<Text>(value, Name.text);
    if constexpr (std::is_unsigned_v<V> && sizeof(V) < sizeof(std::uint64_t)) {
      if (v > std::numeric_limits<V>::max())
        throw Error(std::string(Name.text) + ": " + std::to_string(v) + " is above 2^" +
                    std::to_string(8 * sizeof(V)) + " - 1");
    }
    t.*Member = static_cast<V>(v);
  };
  return f;
}

/// A row for a member of named values (optional or not): `Name` gives a value's canonical
/// name, `Parse` reads a name (aliases too) and throws flynn::Error naming the setting
/// otherwise.
template <auto Member, SettingName Name, auto Parse, auto NameOf>
OptionField<ClassOf<Member>> choice_row(SettingPresentation p) {
  using T = ClassOf<Member>;
  using V = ValueOf<Member>;
  OptionField<T> f = setting_field<T>(Name.text, SettingKind::Choice, std::move(p));
  f.get = [](const T& t) -> std::optional<SettingValue> {
    const std::optional<V> v = member_value<Member>(t);
    if (!v) return std::nullopt;
    return SettingValue(std::string(NameOf(*v)));
  };
  f.set = [](T& t, const SettingValue& value) { t.*Member = Parse(setting_as<std::string>(value, Name.text)); };
  return f;
}

}  // namespace flynn::detail
