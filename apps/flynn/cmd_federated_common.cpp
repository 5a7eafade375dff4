#include "cmd_federated_common.hpp"

#include "commands.hpp"

namespace flynn::cli {

void DpOptions::add_to(CLI::App* cmd, const char* epsilon_help) {
  const auto& fields = federated::dp_param_fields();
  slots_.assign(fields.size(), Slot{});
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const federated::DpParamField& f = fields[i];
    const std::string help = i == 0 && epsilon_help ? epsilon_help : f.help;
    Slot& s = slots_[i];
    switch (f.kind) {
      case SettingKind::Unsigned: s.option = cmd->add_option(f.flag, s.count, help); break;
      case SettingKind::Real: s.option = cmd->add_option(f.flag, s.real, help); break;
      case SettingKind::Choice: s.option = cmd->add_option(f.flag, s.name, help); break;
    }
    s.option->group("Differential privacy");
  }
}

federated::DpGiven DpOptions::given() const {
  federated::DpGiven out(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (!s.option->count()) continue;
    switch (federated::dp_param_fields()[i].kind) {
      case SettingKind::Unsigned: out[i] = s.count; break;
      case SettingKind::Real: out[i] = s.real; break;
      case SettingKind::Choice: out[i] = s.name; break;
    }
  }
  return out;
}

void PartyOptions::add_to(CLI::App* cmd, const char* epsilon_help) {
  hyper.add_to(cmd);
  format.add_to(cmd);
  feature_stats.add_to(cmd);
  cmd->add_option("--schema", schema,
                  "Public table schema (JSON: columns, categories, label; `flynn schema` writes one): the parties "
                  "read their rows against it and agree on it by digest. Required under DP for tables with text "
                  "columns and for LIBSVM data; see docs/federated.md")
      ->group("Differential privacy");
  dp.add_to(cmd, epsilon_help);
  common.add_to(cmd);
}

federated::PartyFiles PartyOptions::files(const std::string& data, const std::string& model) const {
  federated::PartyFiles f;
  f.data = data;
  f.model = model;
  // Missing cells stay NaN until the federation's means are known (party.hpp step 1c).
  f.load = format.party_load_options();
  f.max_input_bytes = format.max_input_bytes();
  f.schema = schema;
  f.feature_stats = feature_stats.path;
  return f;
}

CLI::App* federated_group(CLI::App& app) {
  return command_group(app, "federated",
                       "Federated FlyNN (FlyNNFL): parties train on their own rows, one all-reduce of the "
                       "counts, optional differential privacy");
}

}  // namespace flynn::cli
