#pragma once
// One definition of flynn's settings, from which every consumer is made:
//
//   * hyper_param_fields(): every hyper-parameter a user gives (a member of HyperParams):
//     its name, CLI flag, help, kind and typed access. The CLI's flags and help
//     (HyperParamOptions), a federation party's overrides (with_given), the gRPC wire
//     (flynn/federated/settings.hpp: one (name, text) pair per given field) and Python's
//     keyword names all come from it.
//   * config_fields(): every field of the configuration a model is built from (a member of
//     FlyConfig): its name in messages and in the federation's fingerprint, its JSON and
//     Python keys and its value. FlyConfig::first_difference and describe(), the
//     federation fingerprint (federated::fingerprint), the JSON summaries
//     (eval::config_json) and Python's config dictionaries come from it.
//
// Nothing lists these fields by hand elsewhere. A member added to HyperParams or FlyConfig
// without its row here is caught by tests/settings_table_test.cpp: its structured bindings
// name every member (adding one fails to compile there) and it checks that each row reaches
// exactly its own member; the federation walk (tests/federated_settings_travel_test.cpp)
// needs an example value for every row.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "flynn/config.hpp"

namespace flynn {

/// How a setting's value is written.
enum class SettingKind : std::uint8_t {
  Unsigned,  ///< a count or seed: plain decimal digits, 64-bit
  Real,      ///< a double: written with 17 significant digits, so it reads back exactly
  Choice,    ///< a name from a fixed list (preprocess, variant)
};

/// A setting's value: std::uint64_t for Unsigned, double for Real, the name for Choice.
using SettingValue = std::variant<std::uint64_t, double, std::string>;

/// One hyper-parameter a user may give: a member of HyperParams.
struct HyperParamField {
  const char* name;   ///< "m", "expansion_factor", …: its name on the wire and in Python
  const char* flag;   ///< the CLI flag ("--m", "--expansion-factor")
  std::string help;   ///< the flag's help text
  SettingKind kind;
  /// The value when given (Choice: its canonical name), else none.
  std::optional<SettingValue> (*get)(const HyperParams&);
  /// Gives the field `value` (of the field's kind; a Choice name is parsed, aliases
  /// accepted). Throws flynn::Error naming the setting on an unknown name or wrong kind.
  void (*set)(HyperParams&, const SettingValue& value);
};

/// The rows, in HyperParams' member order (also the order of the CLI's help).
const std::vector<HyperParamField>& hyper_param_fields();
/// The row named `name`, or null.
const HyperParamField* find_hyper_param(std::string_view name);

/// `base` with every field given in `given` replacing its own (a party's flags on top of
/// the coordinator's settings: the federation's agreement step then names any field in
/// which the parties differ).
HyperParams with_given(HyperParams base, const HyperParams& given);

/// One field of a concrete configuration: a member of FlyConfig.
struct ConfigField {
  const char* name;    ///< in messages, the fingerprint and first_difference: "d (input dimension)", "m"
  const char* key;     ///< in JSON and describe(): "d", "m"
  const char* python;  ///< in Python's config dictionaries: "n_features", "m"
  SettingKind kind;
  SettingValue (*get)(const FlyConfig&);
  /// In the federation's fingerprint. Not the seed: party 0 may draw it, so it is agreed
  /// separately (party.hpp, step 1).
  bool fingerprinted;
  /// A keyword argument of Python's FlyNNClassifier (config_params); not n_features.
  bool estimator_param;
  /// describe() and the fingerprint leave the field out at this value (the variant at
  /// "paper", so the paper's descriptions and hello blocks read as before variants
  /// existed); null: always shown.
  const char* omitted_at;
};

/// The rows, in FlyConfig's member order (also the order of describe() and the JSON).
const std::vector<ConfigField>& config_fields();

/// The canonical text of a value: decimal digits, a double in 17 significant digits
/// ("0.80000000000000004"), or the name.
std::string setting_text(const SettingValue& value);
/// The value as describe() shows it: doubles in their shortest exact form ("0.8").
std::string setting_display(const SettingValue& value);
/// Reads `text` as a value of `kind`, strictly: Unsigned is plain decimal digits within
/// 64 bits, Real a finite number and nothing after it, Choice any text (its field's set
/// checks the name). Throws flynn::Error naming `name` otherwise.
SettingValue parse_setting(SettingKind kind, std::string_view text, std::string_view name);

/// "unsigned integer", "number", "name".
const char* setting_kind_name(SettingKind kind);

/// Throws flynn::Error "<setting>: expected a value of kind <kind>" (setting_as's error).
[[noreturn]] void wrong_setting_kind(std::string_view setting, SettingKind want);

/// The value as a T (std::uint64_t for Unsigned, double for Real, std::string for
/// Choice): what every row's typed setter reads. A value of another kind (a caller's
/// mistake: the wire and Python convert by the row's kind first) throws wrong_setting_kind
/// naming `setting`.
template <class T>
const T& setting_as(const SettingValue& value, std::string_view setting) {
  static_assert(std::is_same_v<T, std::uint64_t> || std::is_same_v<T, double> ||
                std::is_same_v<T, std::string>);
  if (const T* t = std::get_if<T>(&value)) return *t;
  wrong_setting_kind(setting, std::is_same_v<T, std::uint64_t> ? SettingKind::Unsigned
                              : std::is_same_v<T, double>      ? SettingKind::Real
                                                               : SettingKind::Choice);
}

}  // namespace flynn
