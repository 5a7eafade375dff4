#pragma once
// A federation simulated on threads and evaluated on held-out rows (what
// `flynn federated simulate` runs), and the JSON form of a federation's party reports and
// privacy account that the federated commands print.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/dataset.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/federated/party_files.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/option_table.hpp"

namespace flynn::eval {

/// The rows of `all` split into (train, test) by a stratified 80/20 hold-out: fold 0 of
/// stratified_folds(·, 5, seed) is the test part.
std::pair<Dataset, Dataset> stratified_holdout(const Dataset& all, std::uint64_t seed);

/// A simulation's rows.
struct SimulationData {
  Dataset train, test;
  std::string test_description;  ///< the test file, or "stratified 20% hold-out of --data"
};

/// `all` as the training rows and `test_path` read with `load` against their features and
/// table (labels required); without a test file, stratified_holdout(all, seed).
SimulationData simulation_data(Dataset all, const std::string& test_path, const io::LoadOptions& load,
                               std::uint64_t seed);

/// How to simulate.
struct SimulationSpec {
  int parties = 2;                         ///< τ, in [1, 4096]
  federated::SplitSpec split;              ///< how training rows are dealt to parties
  std::uint64_t split_seed = 0;            ///< seed of the split
  federated::FederationSettings settings;  ///< hyper-parameters, labels, DP, threads per party
  int predict_threads = 0;                 ///< threads scoring the test rows (0 = all cores)
};

/// What a simulation gives.
struct SimulationResult {
  explicit SimulationResult(federated::ColonyOutcome o) : outcome(std::move(o)) {}
  federated::ColonyOutcome outcome;         ///< the aggregated model, per-party reports, privacy
  double accuracy = 0;                      ///< on the test rows
  double balanced_accuracy = 0;             ///< on the test rows
  double training_seconds = 0;              ///< the slowest party's training time
  double aggregate_seconds = 0;             ///< the counts all-reduce, the fastest party's time
  std::vector<std::size_t> classes_held;    ///< classes with rows at each party
};

/// Splits `train` among spec.parties parties, trains them as a colony on threads (the
/// protocol MPI parties run) and scores the aggregated model on `test`, whose labels must
/// all be in spec.settings.labels. Throws flynn::Error on invalid input (naming the test
/// label that is not a training class) and the federation's errors.
SimulationResult simulate_federation(const Dataset& train, const Dataset& test, const SimulationSpec& spec);

/// `flynn federated simulate` as given besides the party flags (simulation_option_fields()).
struct SimulationRequest {
  std::string data, test, labels, split = "iid", model;
  int parties = 2;
  std::uint64_t split_seed = 0;
};
const OptionTable<SimulationRequest>& simulation_option_fields();

/// A simulation of files: what it found, and its report.
struct SimulationOfFiles {
  SimulationResult result;
  nlohmann::json json;  ///< simulation_json (federated_report.hpp), with "command" and "data"
  std::string text;     ///< simulation_text, with the model line
};

/// Reads request.data as `files` say (with files.schema: against the public schema, as
/// every party would), holds out request.test or a stratified 20%, simulates
/// request.parties parties with `hyper` (seed default: Defaults::seed, for reproducible
/// experiments) and `dp`, each on threads/τ of `threads`; writes request.model when given.
/// Throws flynn::Error naming the flag of a value that does not parse.
SimulationOfFiles simulate_files(const SimulationRequest& request, const federated::PartyFiles& files,
                                 const HyperParams& hyper, const std::optional<federated::DpParams>& dp,
                                 int threads);

/// Per-party JSON: rank, rows (from `rows` when it lists the party, else the report's),
/// seconds per phase, traffic, model checksum.
nlohmann::json party_reports_json(const std::vector<federated::PartyReport>& reports,
                                  const std::vector<std::uint64_t>& rows);

/// The privacy account as JSON (null without DP).
nlohmann::json privacy_account_json(const std::optional<federated::PrivacyAccount>& account,
                                    const std::optional<federated::DpParams>& dp);

}  // namespace flynn::eval
