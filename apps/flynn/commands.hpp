#pragma once
// Subcommands register themselves: each cmd_*.cpp defines a static RegisterCommand, so
// adding a subcommand never touches main.cpp. `order` fixes the order in --help.
#include <CLI/CLI.hpp>

namespace flynn::cli {

using CommandAdder = void (*)(CLI::App& app);

struct RegisterCommand {
  RegisterCommand(int order, CommandAdder add);
};

/// Adds every registered subcommand to `app`, in increasing `order`.
void add_registered_commands(CLI::App& app);

/// The subcommand group `name` of `app` (e.g. "reproduce", "federated"), created with
/// `description` on first use, so that several files can add subcommands to one group.
CLI::App* command_group(CLI::App& app, const std::string& name, const std::string& description);

}  // namespace flynn::cli
