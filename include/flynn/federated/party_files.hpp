#pragma once
// One party run from files, as every front-end runs it (`flynn federated train` over MPI
// or alone, `flynn federated join` over gRPC): read the party's public files and rows,
// run the protocol (party.hpp), check that every party holds the identical model, stage
// it, agree that every party could, and commit it at the end. Anything that goes wrong locally before the protocol
// becomes this party's error, which the agreement step reports to every party, so all stop
// with the reason.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/federated/communicator.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/public_schema.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::federated {

/// Throws flynn::Error "<what>: <dir> is not a directory" (or "is not writable", or
/// "<what>: it is a directory") when `path` cannot be written, so no party trains in vain.
void check_writable_output(const std::string& path, const std::string& what);

/// Reads a party's labelled training rows from `path` with `load`: against `schema` when
/// given (a failure then names the schema file `schema_path` too). Under DP without a
/// schema, LIBSVM data is refused naming --schema: its d would be the largest feature index
/// in its rows. (Tables with text columns are refused by the protocol itself.)
Dataset load_party_rows(const std::string& path, const io::LoadOptions& load,
                        const std::optional<PublicSchema>& schema, const std::string& schema_path, bool dp);

/// What a party reads and writes.
struct PartyFiles {
  std::string data;           ///< this party's rows
  io::LoadOptions load;       ///< how (missing cells stay NaN: LoadOptions::impute = false)
  std::uint64_t max_input_bytes = io::kDefaultMaxInputBytes;  ///< for the schema and statistics files
  std::string schema;         ///< public schema file (public_schema.hpp); "" = none
  std::string feature_stats;  ///< public standardisation statistics (io/feature_stats_file.hpp); "" = none
  std::string model;          ///< where this party writes the model; "" = it writes none
  /// This party's held-out rows (labelled) for the federated evaluation (evaluate_together),
  /// read for the federation's model once it is trained; "" = none.
  std::string test;
  /// With DP: this data's budget ledger (budget_ledger.hpp), charged before the release
  /// leaves the party; "" = none. Refused without DP.
  std::string ledger;
  double ledger_budget = 0;   ///< total ε the data may spend (with `ledger`)
  std::string ledger_note;    ///< the note of the ledger's entry
};

/// What a party's files lack for a federation (`flynn federated join --check`): every
/// problem found without a coordinator, each named.
struct PartyFilesCheck {
  std::size_t rows = 0;      ///< rows of the data, when it could be read
  std::size_t features = 0;  ///< its d
  std::vector<std::string> classes;
  std::vector<std::string> problems;
  /// What could not be checked here, and what would check it.
  std::vector<std::string> unchecked;
};

/// Reads `files` as run_party_from_files would (the data, the public schema and statistics,
/// the test rows, the model's folder, the ledger) and examines the data against `settings`
/// (with the files' missing-value policy, schema and statistics added) for a federation of
/// `parties` (examine_party_data). With no labels in `settings`, the data's own classes
/// stand in for the federation's list (said in `unchecked`); without DP settings, the
/// checks that only DP makes are said in `unchecked` too. Never throws for a problem of the
/// files: each becomes an entry of `problems`.
PartyFilesCheck check_party_files(const PartyFiles& files, FederationSettings settings, int parties);

/// What the run gives.
struct PartyRun {
  PartyResult result;
  std::vector<PartyReport> reports;   ///< every party's, by rank (compare_models)
  std::string model_file;             ///< the model's bytes, identical on every party
  FederatedEvaluation evaluation;     ///< on the parties' test rows (evaluate_together)
  std::optional<double> ledger_spent; ///< ε the ledger's data has spent, this run included
};

/// Runs this party: `settings` with files.load.missing and the files' schema and statistics
/// added. `local_error` is a failure the caller met before (a flag that did not parse); it
/// stops every party like a file that cannot be read. Throws FederationError (the same on
/// every party) when any party fails.
///
/// After the comparison, the federated evaluation (evaluate_together) on files.test, read
/// for the model as `flynn predict` reads rows (its features, table and missing-value
/// policy); a test file that cannot be read or scored stops every party, no model written.
///
/// The model is written only at the very end: once every party holds the same model
/// (compare_models: the same SHA-256 from every party), it is staged beside files.model
/// (io::StagedFile), every party agrees that staging succeeded, `await_end` (when given)
/// is called — the gRPC front-end waits there for the coordinator's Done — and only when
/// it returns is the file moved into place. When anything throws before, no file is left
/// behind, not even the staged one.
PartyRun run_party_from_files(Communicator& comm, const PartyFiles& files, FederationSettings settings,
                              std::string local_error = "",
                              const std::function<void(const PartyRun&)>& await_end = {});

/// "<who>: this party's reason (not sent to the federation): …" for a FederationError that
/// kept a reason from the other parties (FederationError::local_detail), else "".
std::string local_detail_line(const std::exception& e, const std::string& who);

}  // namespace flynn::federated
