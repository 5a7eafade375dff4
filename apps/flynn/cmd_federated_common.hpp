#pragma once
// Pieces shared by `flynn federated train` and `flynn federated simulate`: the
// differential-privacy flags, the per-party table and the privacy line they print, and
// the "federated" command group.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "flynn/federated/dp.hpp"
#include "flynn/federated/party.hpp"

namespace flynn::cli {

/// The differential-privacy flags of every federated command (train, simulate, serve,
/// join): --dp-epsilon, --dp-T, --dp-exponent, --dp-unit, --dp-postprocess. One home, so
/// the unit → per-party ε computation is the library's (federated::DpMechanism) everywhere.
struct DpOptions {
  double epsilon = 0;
  std::uint32_t T = 0;
  std::string exponent = "paper", unit = "paper";
  /// The measured best default (docs/federated.md, "Post-processing the release"): it never
  /// cost accuracy at the study's operating points. `flynn reproduce privacy` keeps the
  /// paper's model (none), and so does the library's DpParams.
  std::string postprocess = "noise-units";
  CLI::Option *eps_opt = nullptr, *t_opt = nullptr, *exp_opt = nullptr, *unit_opt = nullptr,
              *post_opt = nullptr;

  /// Adds the flags to `cmd`; `epsilon_help` describes --dp-epsilon for that command.
  void add_to(CLI::App* cmd, const char* epsilon_help =
                                 "Total privacy budget epsilon of the federation; enables the DP "
                                 "release (each party spends epsilon/parties under --dp-unit "
                                 "paper, epsilon under --dp-unit record)");
  /// The flags as DpParams, or none when neither --dp-epsilon nor --dp-T was given.
  /// Throws flynn::Error when only one of them was, when another DP flag comes without
  /// them, or on an invalid value.
  std::optional<federated::DpParams> params() const;
  /// `base` with every DP flag that was given replacing its field (a gRPC party's
  /// overrides of the coordinator's settings; the agreement step names any difference).
  std::optional<federated::DpParams> override(std::optional<federated::DpParams> base) const;
};

/// One line per party: rows, local/wait/aggregation/training seconds, traffic, model CRC.
/// `rows` gives the parties' rows when known (simulation), else the reports' own.
void print_party_table(const std::vector<federated::PartyReport>& reports, const std::vector<std::uint64_t>& rows);

/// The privacy spent (nothing without DP).
void print_privacy(const std::optional<federated::PrivacyAccount>& account,
                   const std::optional<federated::DpParams>& dp);

/// The "federated" command group of `app`.
CLI::App* federated_group(CLI::App& app);

}  // namespace flynn::cli
