#pragma once
// Option tables: the settings of one library operation (a tuning run, a coordinator, a
// party's policy, a study, how a file is read), each defined once beside the operation,
// with its flag, help text, bounds and group. Front-ends are made from the rows: the CLI
// binds each row to a flag (apps/flynn/bind_options.hpp), so a flag's name, help and range
// are never written a second time in a front-end. The hyper-parameters and the DP settings
// have their own, richer tables (settings_table.hpp, federated/dp_settings.hpp): those
// rows also travel on the wire and into the fingerprint.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace flynn {

/// One option of the settings struct T: where its value goes and how it is presented.
template <class T>
struct OptionField {
  /// The member the option writes, by its type: a pointer to member (&T::folds) or, for a
  /// nested member, a function returning a reference ([](T& o) -> auto& { return o.tls.ca; }).
  /// bool: a flag without a value; vector<string>: a comma-separated list.
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
};

template <class T>
using OptionTable = std::vector<OptionField<T>>;

}  // namespace flynn
