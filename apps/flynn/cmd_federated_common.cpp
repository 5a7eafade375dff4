#include "cmd_federated_common.hpp"

#include "commands.hpp"

namespace flynn::cli {

void PartyOptions::add_to(CLI::App* cmd, const char* epsilon_help) {
  hyper.add_to(cmd);
  format.add_to(cmd);
  feature_stats.add_to(cmd);
  cmd->add_option("--schema", schema,
                  "Public table schema (JSON: columns, categories, label; `flynn schema` writes one): the parties "
                  "read their rows against it and agree on it by digest. Required under DP for tables with text "
                  "columns and for LIBSVM data; see docs/guide/federated.md")
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
