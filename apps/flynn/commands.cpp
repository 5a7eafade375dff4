#include "commands.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace flynn::cli {

namespace {
// A function-local static avoids the static-initialisation-order problem between the
// registry and the registrars in other translation units.
std::vector<std::pair<int, CommandAdder>>& registry() {
  static std::vector<std::pair<int, CommandAdder>> r;
  return r;
}
}  // namespace

RegisterCommand::RegisterCommand(int order, CommandAdder add) { registry().emplace_back(order, add); }

void add_registered_commands(CLI::App& app) {
  auto r = registry();
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, add] : r) add(app);
}

CLI::App* command_group(CLI::App& app, const std::string& name, const std::string& description) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  CLI::App* group = app.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

}  // namespace flynn::cli
