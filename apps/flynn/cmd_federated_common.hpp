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

/// --dp-epsilon, --dp-T, --dp-exponent, --dp-unit, --dp-postprocess (dp_param_fields).
struct DpOptions {
  /// `epsilon_help` (if given) replaces --dp-epsilon's help for this command.
  void add_to(CLI::App* cmd, const char* epsilon_help = nullptr) {
    flags_ = bind_options(cmd, federated::dp_param_fields(), unused_);
    if (epsilon_help) flags_.option(0)->description(epsilon_help);
  }
  /// The flags given, one per row of dp_param_fields.
  federated::DpGiven given() const {
    federated::DpGiven out(federated::dp_param_fields().size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = flags_.given(i);
    return out;
  }
  std::optional<federated::DpParams> params() const { return federated::dp_params_from_given(given()); }

 private:
  BoundOptions<federated::DpParams> flags_;
  federated::DpParams unused_;  // every row is a setting row: given() reads the values as parsed
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
