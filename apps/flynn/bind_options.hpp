#pragma once
// Binds a library option table (flynn/option_table.hpp) to a CLI11 command: one flag per
// row, with the row's help, group, bounds and requiredness. The CLI writes no flag of a
// table by hand. A plain row binds straight to its member; a setting row is parsed in its
// kind into a slot of the binding, and written into its member by apply() once the
// command line is parsed (so a bad value is reported after CLI11's own checks, as the
// library reports it).
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "flynn/option_table.hpp"

namespace flynn::cli {

/// The flags of one table on one command: the options in the table's order and, for its
/// setting rows, the values as parsed.
template <class T>
class BoundOptions {
 public:
  /// The flag of row `i`.
  CLI::Option* option(std::size_t i) const { return options_.at(i); }
  /// Row i's value as given on the command line (none: not given, or not a setting row).
  std::optional<SettingValue> given(std::size_t i) const {
    const Slot* s = slots_.at(i).get();
    if (!s || !options_[i]->count()) return std::nullopt;
    switch (s->kind) {
      case SettingKind::Unsigned: return SettingValue(s->count);
      case SettingKind::Real: return SettingValue(s->real);
      case SettingKind::Choice: return SettingValue(s->name);
    }
    return std::nullopt;
  }
  /// Writes every setting row given into `target` (each row's set: throws flynn::Error
  /// naming the setting on a value it cannot take).
  void apply(const OptionTable<T>& table, T& target) const {
    for (std::size_t i = 0; i < table.size(); ++i)
      if (const auto v = given(i)) table[i].set(target, *v);
  }

 private:
  template <class U>
  friend BoundOptions<U> bind_options(CLI::App* cmd, const OptionTable<U>& table, U& target);
  // One per setting row; the member of the row's kind is the one bound. Held by pointer:
  // CLI11 keeps the address.
  struct Slot {
    SettingKind kind = SettingKind::Unsigned;
    std::uint64_t count = 0;
    double real = 0;
    std::string name;
  };
  std::vector<CLI::Option*> options_;
  std::vector<std::shared_ptr<Slot>> slots_;  // null for a plain row
};

namespace detail {

// A plain row: the flag bound to the member it names.
template <class T>
CLI::Option* bind_member(CLI::App* cmd, const OptionField<T>& f, T& target) {
  return std::visit(
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
}

}  // namespace detail

/// Adds every row of `table` to `cmd`, writing into `target` (which must outlive the parse;
/// setting rows reach it through apply()). Returns the binding, in the table's order.
template <class T>
BoundOptions<T> bind_options(CLI::App* cmd, const OptionTable<T>& table, T& target) {
  using Slot = typename BoundOptions<T>::Slot;
  BoundOptions<T> bound;
  for (const OptionField<T>& f : table) {
    CLI::Option* opt = nullptr;
    std::shared_ptr<Slot> slot;
    if (f.set) {
      slot = std::make_shared<Slot>();
      slot->kind = f.kind;
      switch (f.kind) {
        case SettingKind::Unsigned: opt = cmd->add_option(f.flag, slot->count, f.help); break;
        case SettingKind::Real: opt = cmd->add_option(f.flag, slot->real, f.help); break;
        case SettingKind::Choice: opt = cmd->add_option(f.flag, slot->name, f.help); break;
      }
    } else {
      opt = detail::bind_member(cmd, f, target);
    }
    // A row may give its group as {} (a null pointer): the command's own options.
    opt->group(f.hidden ? std::string() : f.group && *f.group ? std::string(f.group) : std::string("Options"));
    if (f.required) opt->required();
    if (f.given) opt->each([&target, given = f.given](const std::string&) { given(target) = true; });
    bound.options_.push_back(opt);
    bound.slots_.push_back(std::move(slot));
  }
  return bound;
}

}  // namespace flynn::cli
