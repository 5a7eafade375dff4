// flynn cli-reference (hidden): the whole command line as JSON, for the documentation's
// generated reference (docs/reference/, made by docs/gen_reference.py). It walks the CLI11
// objects the other commands registered, so every command and flag is listed however it
// was declared, and adds the settings tables the hyper-parameter and DP flags are made from
// with what the defaults resolve to.
#include <iostream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/config.hpp"
#include "flynn/federated/dp_settings.hpp"
#include "flynn/settings_table.hpp"
#include "flynn/version.hpp"

namespace flynn::cli {

namespace {

using nlohmann::json;

// The flags made from a settings table: their defaults are rules (a function of the data),
// which the settings reference states, not the value CLI11 holds before parsing.
std::set<std::string> setting_flags() {
  std::set<std::string> flags;
  for (const HyperParamField& f : hyper_param_fields()) flags.insert(f.flag);
  for (const federated::DpParamField& f : federated::dp_param_fields()) flags.insert(f.flag);
  return flags;
}

json option_json(CLI::Option* o, const std::set<std::string>& settings) {
  json j;
  std::vector<std::string> names;
  for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  for (const std::string& n : o->get_snames()) names.push_back("-" + n);
  j["names"] = names;
  j["positional"] = names.empty();
  j["name"] = names.empty() ? o->get_name(true) : names.front();
  j["help"] = o->get_description();
  const bool flag = o->get_type_size() == 0;
  j["flag"] = flag;
  j["type"] = flag ? std::string() : o->get_type_name();
  j["required"] = o->get_required();
  j["multiple"] = o->get_expected_max() > 1 || o->get_items_expected_max() > 1;
  j["group"] = o->get_group();
  j["setting"] = !names.empty() && settings.count(names.front()) > 0;
  // The value the option's variable holds before parsing (its default), unless a settings
  // table makes it; a flag's default is off.
  o->capture_default_str();
  j["default"] = j["setting"] ? std::string() : flag ? std::string("off") : o->get_default_str();
  return j;
}

void add_command_json(CLI::App* app, const std::string& path, const std::set<std::string>& settings, json& out) {
  json c;
  c["path"] = path;
  c["name"] = app->get_name();
  c["description"] = app->get_description();
  c["options"] = json::array();
  for (CLI::Option* o : app->get_options([](const CLI::Option*) { return true; })) {
    if (o == app->get_help_ptr() || o == app->get_help_all_ptr()) continue;
    c["options"].push_back(option_json(o, settings));
  }
  c["subcommands"] = json::array();
  std::vector<CLI::App*> subs;
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_group().empty()) continue;  // hidden: this command
    c["subcommands"].push_back(sub->get_name());
    subs.push_back(sub);
  }
  out.push_back(c);
  for (CLI::App* sub : subs) add_command_json(sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), settings, out);
}

json settings_json() {
  json s;
  for (const HyperParamField& f : hyper_param_fields())
    s["hyper_params"].push_back({{"name", f.name}, {"flag", f.flag}, {"kind", setting_kind_name(f.kind)}, {"help", f.help}});
  for (const federated::DpParamField& f : federated::dp_param_fields())
    s["dp_params"].push_back({{"name", f.name},
                              {"flag", f.flag},
                              {"kind", f.values ? f.values : setting_kind_name(f.kind)},
                              {"help", f.help},
                              {"fingerprint", f.fingerprint}});
  for (const ConfigField& f : config_fields())
    s["config_fields"].push_back({{"key", f.key},
                                  {"python", f.python},
                                  {"name", f.name},
                                  {"kind", setting_kind_name(f.kind)},
                                  {"estimator_param", f.estimator_param},
                                  {"fingerprinted", f.fingerprinted}});
  // What the defaults resolve to for a few input widths (ten classes): the rules of
  // config.hpp's Defaults, computed rather than restated.
  for (const std::uint32_t d : {2u, 8u, 16u, 17u, 20u, 64u, 256u, 784u, 2000u}) {
    const FlyConfig c = HyperParams{}.resolve(d, 10);
    json fields;
    for (const ConfigField& f : config_fields()) fields[f.key] = setting_display(f.get(c));
    s["resolved_defaults"].push_back(fields);
  }
  return s;
}

void add_cli_reference_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("cli-reference", "Print every command, flag and setting as JSON");
  cmd->group("");  // hidden: a tool of the documentation build
  cmd->callback([&app] {
    json out;
    out["program"] = "flynn";
    out["version"] = flynn::version_string;
    out["description"] = app.get_description();
    out["commands"] = json::array();
    add_command_json(&app, "", setting_flags(), out["commands"]);
    out["settings"] = settings_json();
    print_json(out);
  });
}

const RegisterCommand registered(1000, add_cli_reference_command);

}  // namespace

}  // namespace flynn::cli
