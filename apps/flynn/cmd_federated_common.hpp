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

/// --dp-epsilon, --dp-T, --dp-exponent.
struct DpOptions {
  double epsilon = 0;
  std::uint32_t T = 0;
  std::string exponent = "paper";
  CLI::Option *eps_opt = nullptr, *t_opt = nullptr;
  void add_to(CLI::App* cmd);
  /// The DP parameters, or none when neither flag is given. Throws on inconsistent flags;
  /// validation of the values is the protocol's (agreed).
  std::optional<federated::DpParams> params() const;
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
