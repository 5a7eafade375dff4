#pragma once
// A simulated colony: τ FlyNNFL parties as threads of this process, running exactly the
// protocol of party.hpp over a ThreadColony (only the transport differs from MPI).
// Used by `flynn federated simulate`, the privacy and scaling studies and the tests.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/dataset.hpp"
#include "flynn/metrics.hpp"
#include "flynn/federated/party.hpp"

namespace flynn::federated {

/// The outcome of one simulated federation.
struct ColonyOutcome {
  explicit ColonyOutcome(FlyNN m) : model(std::move(m)) {}
  FlyNN model;                        ///< the aggregated model (party 0's; all are identical)
  std::string model_file;             ///< its serialised bytes (identical on every party)
  /// Per party, by rank (from compare_models), every party's timings filled in.
  std::vector<PartyReport> reports;
  std::vector<std::uint64_t> rows;    ///< rows of each party (known to the simulator)
  std::optional<PrivacyAccount> privacy;
  /// Each party's PartyResult::release_warning, by rank ("" where the release is useful).
  std::vector<std::string> release_warnings;
  bool seed_drawn = false;
  double wall_seconds = 0;            ///< from starting the threads until all finished
  /// The federated evaluation on the parties' test rows (evaluate_together; `skipped` says
  /// why there is none).
  FederatedEvaluation evaluation;
};

/// Runs one party per element of `parties` (pointers not owned; an empty Dataset is an
/// empty party, a null pointer a party that could not read its data, with the reason in
/// `errors[rank]` when given). Each party runs train_party then compare_models on its
/// own thread, with `settings.threads` worker threads of its own, then evaluate_together
/// on `tests[rank]` (each party's held-out rows, read for the model; absent or null = that
/// party gives none). Throws the federation's
/// FederationError (every party raised the same) or, when a party failed outside the
/// protocol, that party's error after aborting the colony so no thread waits forever.
ColonyOutcome run_colony(const std::vector<const Dataset*>& parties,
                         const FederationSettings& settings,
                         const std::vector<std::string>& errors = {},
                         const std::vector<const Dataset*>& tests = {});

/// The worker threads each of `parties` simulated parties is given out of `threads`
/// (0 = the machine's cores): an equal share, at least one. What `flynn federated
/// simulate` and Python's flynn.federated.simulate give FederationSettings::threads.
int threads_per_party(int threads, int parties);

}  // namespace flynn::federated
