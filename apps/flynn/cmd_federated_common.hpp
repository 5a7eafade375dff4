#pragma once
// Pieces shared by the federated commands (train, simulate, join): the differential-privacy
// flags, --schema and reading a party's rows, the per-party table and the privacy line they
// print, and the "federated" command group.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "flynn/federated/dp.hpp"
#include "flynn/dataset.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/public_schema.hpp"
#include "flynn/io/loaders.hpp"

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

/// --schema FILE: the federation's public schema (flynn/federated/public_schema.hpp), on
/// every command that runs parties (train, simulate, join).
struct SchemaOption {
  std::string path;  ///< as given; empty = none
  void add_to(CLI::App* cmd);
  /// The schema, or none without the flag; the file is read under `max_bytes`.
  std::optional<federated::PublicSchema> load(std::uint64_t max_bytes) const;
};

/// Reads a party's labelled training rows from `path` with `load`: against `schema` when
/// given (a failure then names the schema file too). Under DP without a schema, LIBSVM
/// data is refused naming --schema: its d would be the largest feature index in its rows.
/// (Tables with text columns are refused by the party protocol itself, on every transport.)
Dataset load_party_rows(const std::string& path, const io::LoadOptions& load,
                        const std::optional<federated::PublicSchema>& schema,
                        const SchemaOption& schema_flag, bool dp);

/// Prints, on this process' stderr only, the reason a FederationError kept from the other
/// parties (FederationError::local_detail); nothing when there is none. `who` prefixes it.
void print_local_detail(const std::exception& e, const char* who);

/// One line per party: rows, local/wait/aggregation/training seconds, traffic, model CRC.
/// `rows` gives the parties' rows when known (simulation), else the reports' own.
void print_party_table(const std::vector<federated::PartyReport>& reports, const std::vector<std::uint64_t>& rows);

/// The privacy spent (nothing without DP).
void print_privacy(const std::optional<federated::PrivacyAccount>& account,
                   const std::optional<federated::DpParams>& dp);

/// The "federated" command group of `app`.
CLI::App* federated_group(CLI::App& app);

}  // namespace flynn::cli
