#pragma once
// Option tables: one mechanism for every setting flynn takes. Each setting is one row,
// defined once beside the code it configures, and every front-end is made from the rows:
//
//   * the CLI binds each row to a flag (apps/flynn/bind_options.hpp): its name, help, group,
//     bounds and requiredness are never written a second time in a front-end;
//   * a row with a setting `name` also travels beyond the CLI, as text of its kind: the
//     federation's wire (flynn/federated/settings.hpp: one (name, text) pair per given row),
//     its fingerprint (the rows with a `fingerprint` name), JSON and Python's keyword
//     arguments (under `name`).
//
// Rows reach their member in one of two ways: a plain option (a file name, a count of folds,
// a switch) binds the CLI straight to its member (`target`); a setting that travels reads and
// writes its member as a SettingValue (`get`, `set`), and the CLI parses it in the row's
// kind. The tables: the hyper-parameters (flynn/settings_table.hpp), the DP settings
// (flynn/federated/dp_settings.hpp), and each file operation's request (train, predict,
// tune, the studies, how a file is read, ...).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace flynn {

/// How a setting's value is written.
enum class SettingKind : std::uint8_t {
  Unsigned,  ///< a count or seed: plain decimal digits, 64-bit
  Real,      ///< a double: written with 17 significant digits, so it reads back exactly
  Choice,    ///< a name from a fixed list (preprocess, variant)
};

/// A setting's value: std::uint64_t for Unsigned, double for Real, the name for Choice.
using SettingValue = std::variant<std::uint64_t, double, std::string>;

/// One option of the settings struct T: where its value goes and how it is presented.
template <class T>
struct OptionField {
  /// The member a plain option writes, by its type: a pointer to member (&T::folds) or, for a
  /// nested member, a function returning a reference ([](T& o) -> auto& { return o.tls.ca; }).
  /// bool: a flag without a value; vector<string>: a comma-separated list. Unused by a row
  /// with `set` (a setting that travels).
  using Target = std::variant<std::function<bool&(T&)>, std::function<int&(T&)>,
                              std::function<std::uint32_t&(T&)>, std::function<std::uint64_t&(T&)>,
                              std::function<double&(T&)>, std::function<std::string&(T&)>,
                              std::function<std::vector<std::string>&(T&)>>;
  std::string flag;   ///< "--budget"; further names after commas ("--quiet,-q")
  std::string help;   ///< empty for a hidden alias
  Target target;
  const char* group = "";  ///< help group; empty or null: the command's own options
  bool required = false;
  std::optional<double> min = {};  ///< inclusive bounds of a number
  std::optional<double> max = {};
  /// Kept for existing scripts: accepted, not shown in --help.
  bool hidden = false;
  /// Set to true when the option is given (a default that depends on what else is given:
  /// --quick lowers the budget only when --budget is not given); none: not tracked. A
  /// function pointer, not a std::function: GCC 12 miscompiles a defaulted std::function
  /// member of a class template in an aggregate (an undefined std::function() reference).
  bool& (*given)(T&) = nullptr;

  // ---- A setting that travels beyond the CLI (the rows made by setting_row and
  // choice_row, flynn/detail/setting_rows.hpp).
  /// Its name on the wire, in JSON and in Python ("m", "dp_epsilon"); null: a CLI-only option.
  const char* name = nullptr;
  SettingKind kind = SettingKind::Choice;
  /// What the reference calls its values when the kind's name would mislead (dp_T takes a
  /// count or the word "auto", its kind Choice: "count or 'auto'"); null: the kind's name.
  const char* values = nullptr;
  /// The value when given (Choice: its canonical name), else none.
  std::optional<SettingValue> (*get)(const T&) = nullptr;
  /// Gives the member `value` (of the row's kind; a Choice name is parsed, aliases
  /// accepted). Throws flynn::Error naming the setting on an unknown name, a value out of
  /// the member's range or the wrong kind.
  void (*set)(T&, const SettingValue&) = nullptr;
  /// Its name in the federation's fingerprint ("dp-epsilon"); null: not in it.
  const char* fingerprint = nullptr;
  /// The fingerprint leaves the row out at this value (dp_postprocess at "none", so the
  /// paper's runs agree with parties that predate the option); null: always in it.
  const char* fingerprint_omitted_at = nullptr;
  /// The rows that turn a feature on together (dp_epsilon and dp_T: DP).
  bool enables = false;
};

template <class T>
using OptionTable = std::vector<OptionField<T>>;

/// The row of `table` whose setting name is `name`, or null.
template <class T>
const OptionField<T>* find_setting(const OptionTable<T>& table, std::string_view name) {
  for (const OptionField<T>& f : table)
    if (f.name && name == f.name) return &f;
  return nullptr;
}

/// The canonical text of a value: decimal digits, a double in 17 significant digits
/// ("0.80000000000000004"), or the name.
std::string setting_text(const SettingValue& value);
/// The value as descriptions show it: doubles in their shortest exact form ("0.8").
std::string setting_display(const SettingValue& value);
/// Reads `text` as a value of `kind`, strictly: Unsigned is plain decimal digits within
/// 64 bits, Real a finite number and nothing after it, Choice any text (its row's set
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

/// `base` with every setting row of `table` given in `given` replacing its own (a party's
/// flags on top of the coordinator's settings: the federation's agreement step then names
/// any setting in which the parties differ).
template <class T>
T with_given(const OptionTable<T>& table, T base, const T& given) {
  for (const OptionField<T>& f : table)
    if (f.get && f.set)
      if (const auto v = f.get(given)) f.set(base, *v);
  return base;
}

/// The fingerprinted rows of `table` as (fingerprint name, canonical text), in table order.
template <class T>
std::vector<std::pair<std::string, std::string>> fingerprint_of(const OptionTable<T>& table, const T& value) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const OptionField<T>& f : table) {
    if (!f.fingerprint || !f.get) continue;
    const auto v = f.get(value);
    if (!v) continue;
    const std::string text = setting_text(*v);
    if (f.fingerprint_omitted_at && text == f.fingerprint_omitted_at) continue;
    out.emplace_back(f.fingerprint, text);
  }
  return out;
}

}  // namespace flynn
