#pragma once
// What the federated commands print about a run, as JSON and as text: one home for the
// party table, the privacy line, a coordinator's outcome, a gRPC party's run and a
// simulation's summary (`flynn federated train|simulate|serve|join`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/eval/federated_simulation.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/federated/grpc.hpp"
#include "flynn/federated/grpc_commands.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/party_files.hpp"

namespace flynn::eval {

/// One line per party: rows, local/wait/aggregation/training seconds, traffic, model CRC.
/// `rows` gives the parties' rows when known (simulation), else the reports' own.
std::string party_table(const std::vector<federated::PartyReport>& reports, const std::vector<std::uint64_t>& rows);

/// "differential privacy: epsilon spent …" (with its newline), or "" without DP.
std::string privacy_line(const std::optional<federated::PrivacyAccount>& account,
                         const std::optional<federated::DpParams>& dp);

/// The model every party holds: config, seed_drawn_by_party_0, model_bytes, model_crc32,
/// identical_on_all_parties.
/// The federated evaluation (federated::evaluate_together) as JSON ("federation_test"): the
/// parties that gave test rows, and the accuracy, balanced accuracy and confusion matrix
/// (rows: true class) over `labels`, or why it was skipped; under DP `covered_by_dp` false.
nlohmann::json federation_test_json(const federated::FederatedEvaluation& evaluation, const LabelSet& labels, bool dp);
/// Its line for the text output ("" when no party gave test rows).
std::string federation_test_text(const federated::FederatedEvaluation& evaluation, bool dp);

nlohmann::json federation_model_json(const federated::PartyResult& result, const std::string& model_file);

/// A simulation (`flynn federated simulate`): everything but the command and the data path.
nlohmann::json simulation_json(const SimulationResult& r, const SimulationSpec& spec, std::uint64_t train_rows,
                               std::uint64_t test_rows, const std::string& test_description);
/// Its text summary.
std::string simulation_text(const SimulationResult& r, const SimulationSpec& spec, std::uint64_t train_rows,
                            std::uint64_t test_rows, const std::string& test_description);

/// {"sent", "received", "messages_sent", "messages_received"}.
nlohmann::json wire_json(const federated::WireTraffic& w);

/// A coordinator's run: parties (name, rank, wire bytes), refusals, collectives, seconds,
/// the model's size and CRC.
nlohmann::json coordinator_json(const federated::CoordinatorOutcome& out, bool secure_aggregation);
/// Its text summary (the model path, when written, is the caller's to print).
std::string coordinator_text(const federated::CoordinatorOutcome& out, bool secure_aggregation);

/// One party of `flynn federated train` (MPI or alone), as rank 0 reports it.
struct TrainedParty {
  int parties = 1;
  std::string transport;   ///< "MPI (Open MPI v4.1.4, …)", "solo (…)"
  std::string data;        ///< the --data pattern
  std::string model;       ///< the --model pattern
  std::string model_path;  ///< rank 0's model file
  bool per_rank = false;   ///< every rank wrote its copy ({rank} in the pattern)
  std::optional<federated::DpParams> dp;
};
nlohmann::json trained_party_json(const federated::PartyRun& run, const TrainedParty& p);
std::string trained_party_text(const federated::PartyRun& run, const TrainedParty& p);

/// One gRPC party's run (federated::join_federation), as `flynn federated join` reports it.
nlohmann::json joined_party_json(const federated::JoinOutcome& joined);
std::string joined_party_text(const federated::JoinOutcome& joined);

}  // namespace flynn::eval
