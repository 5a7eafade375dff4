#pragma once
// Flags and checks shared by `flynn federated serve` and `flynn federated join` (the
// gRPC federation): DP flags with the privacy unit, the output-path check, JSON of
// wire traffic. Only compiled into commands when flynn has gRPC.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "flynn/federated/dp.hpp"
#include "flynn/federated/grpc.hpp"

namespace flynn::cli {

/// --dp-epsilon, --dp-T, --dp-exponent, --dp-unit.
struct FederatedDpFlags {
  double epsilon = 0;
  std::uint32_t T = 0;
  std::string exponent = "paper", unit = "paper";
  CLI::Option *eps_opt = nullptr, *t_opt = nullptr, *exp_opt = nullptr, *unit_opt = nullptr;

  void add_to(CLI::App* cmd, const char* epsilon_help);
  /// The flags as DpParams, or none when neither --dp-epsilon nor --dp-T was given;
  /// throws flynn::Error when only one was.
  std::optional<federated::DpParams> params() const;
  /// `base` with every DP flag that was given replacing its field (join's overrides).
  std::optional<federated::DpParams> override(std::optional<federated::DpParams> base) const;
};

/// Throws flynn::Error naming the problem when `path` cannot be written (missing or
/// read-only directory, or a directory at that path), so no process trains in vain.
void check_writable_output(const std::string& path, const char* flag);

/// {"sent": …, "received": …, "messages_sent": …, "messages_received": …}
nlohmann::json wire_json(const federated::WireTraffic& w);

}  // namespace flynn::cli
