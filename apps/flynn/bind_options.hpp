#pragma once
// Binds a library option table (flynn/option_table.hpp) to a CLI11 command: one flag per
// row, with the row's help, group, bounds and requiredness. The CLI writes no flag of a
// table by hand.
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "flynn/option_table.hpp"

namespace flynn::cli {

/// Adds every row of `table` to `cmd`, writing into `target` (which must outlive the
/// parse). Returns the options in the table's order.
template <class T>
std::vector<CLI::Option*> bind_options(CLI::App* cmd, const OptionTable<T>& table, T& target) {
  std::vector<CLI::Option*> options;
  for (const OptionField<T>& f : table) {
    CLI::Option* opt = std::visit(
        [&](const auto& access) -> CLI::Option* {
          auto& value = access(target);
          using V = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<V, bool>) {
            return cmd->add_flag(f.flag, value, f.help);
          } else {
            CLI::Option* o = cmd->add_option(f.flag, value, f.help);
            // A flag's list is comma-separated; a positional list (file names) is one per word.
            if constexpr (std::is_same_v<V, std::vector<std::string>>)
              if (f.flag.front() == '-') o->delimiter(',');
            if constexpr (std::is_arithmetic_v<V>) {
              // In the value's own type, so an integer's range reads "1 to 100000".
              if (f.min || f.max)
                o->check(CLI::Range(f.min ? static_cast<V>(*f.min) : std::numeric_limits<V>::lowest(),
                                    f.max ? static_cast<V>(*f.max) : std::numeric_limits<V>::max()));
            }
            return o;
          }
        },
        f.target);
    // A row may give its group as {} (a null pointer): the command's own options.
    opt->group(f.hidden ? std::string() : f.group && *f.group ? std::string(f.group) : std::string("Options"));
    if (f.required) opt->required();
    if (f.given) opt->each([&target, given = f.given](const std::string&) { given(target) = true; });
    options.push_back(opt);
  }
  return options;
}

}  // namespace flynn::cli
