#pragma once
// Flags shared by the federated commands: the DP flags (one per row of the library's table,
// flynn/federated/dp_settings.hpp) and the flags of every command that runs parties from
// files (train, simulate, join); and the "federated" command group.
#include <string>

#include <CLI/CLI.hpp>

#include "cli_common.hpp"
#include "flynn/federated/dp_settings.hpp"
#include "flynn/federated/party_files.hpp"

namespace flynn::cli {

/// --dp-epsilon, --dp-T, --dp-exponent, --dp-unit, --dp-postprocess.
struct DpOptions {
  /// `epsilon_help` (if given) replaces --dp-epsilon's help for this command.
  void add_to(CLI::App* cmd, const char* epsilon_help = nullptr);
  /// The flags given, one per row of dp_param_fields.
  federated::DpGiven given() const;
  std::optional<federated::DpParams> params() const { return federated::dp_params_from_given(given()); }

 private:
  struct Slot {
    std::uint64_t count = 0;
    double real = 0;
    std::string name;
    CLI::Option* option = nullptr;
  };
  std::vector<Slot> slots_;  // sized once: CLI11 keeps pointers into them
};

/// What every command that runs parties reads: hyper-parameters, the data format,
/// --feature-stats, --schema, the DP flags, --threads/--quiet/--json.
struct PartyOptions {
  std::string schema;
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
  DpOptions dp;
  FeatureStatsOption feature_stats;
  void add_to(CLI::App* cmd, const char* epsilon_help = nullptr);
  /// The files of a party reading `data` and writing `model` ("" = none).
  federated::PartyFiles files(const std::string& data, const std::string& model) const;
};

/// The "federated" command group of `app`.
CLI::App* federated_group(CLI::App& app);

}  // namespace flynn::cli
