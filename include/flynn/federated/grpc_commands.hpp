#pragma once
// `flynn federated serve` and `flynn federated join` as given: their settings with their
// option tables (flags, help, groups: flynn/option_table.hpp), what the coordinator is
// started with, and a party's whole run: join, take the coordinator's settings with this
// party's own on top, train its rows, end with the federation's model. The hyper-parameter
// and DP flags come from their own tables (settings_table.hpp, dp_settings.hpp).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "flynn/federated/dp_settings.hpp"
#include "flynn/federated/grpc.hpp"
#include "flynn/federated/party_files.hpp"
#include "flynn/option_table.hpp"
#include "flynn/progress.hpp"

namespace flynn::federated {

/// Routes gRPC's own log lines (`--verbose`): with `verbose` every one goes to stderr
/// (marked "grpc"); without, none does, except that a TLS handshake that failed (which gRPC
/// reports only in its log) is passed to `tls_failures` (may be empty) as one line naming
/// the cause.
void route_grpc_log(bool verbose, std::function<void(const std::string&)> tls_failures);

/// What `serve` is given besides the hyper-parameters and DP settings.
struct ServeRequest {
  /// A coordinator's kit (provision.hpp): listen address, parties, TLS files, CRL and
  /// allow-list come from it where the flags do not give them.
  std::string kit;
  CoordinatorOptions coordinator;  ///< listen, parties, TLS files, deadlines, CRL
  std::string allow;               ///< comma-separated CNs; "" = any certificate of the CA
  std::string labels;              ///< the federation's label list L1,L2,...
  std::string model;               ///< where to write the federation's model; "" = nowhere
  std::string missing;             ///< the parties' missing-cell policy; "" = each party's
  std::string secure_aggregation = "on";
  double max_message_mb = static_cast<double>(kDefaultMaxMessageBytes >> 20);
  /// The coordinator's options, the settings it hands every party included (the kit's
  /// values under the flags). Throws flynn::Error naming the flag of a value that does not
  /// parse, a required flag that neither it nor the kit gives, a party's kit, or an
  /// unwritable --model.
  CoordinatorOptions options(const HyperParams& hyper, const std::optional<DpParams>& dp) const;
};
const OptionTable<ServeRequest>& serve_option_fields();

/// What `join` is given besides the party's files, hyper-parameters and DP settings.
struct JoinRequest {
  /// A party's kit (provision.hpp): server, TLS files, CRL, expected parties and
  /// --min-parties come from it where the flags do not give them.
  std::string kit;
  JoinOptions join;  ///< server, TLS files, deadline, this party's policy
  std::string data, model, ledger;
  std::string test;   ///< held-out rows for the federated evaluation; "" = none
  double budget = 0;  ///< total ε of --dp-ledger
  bool budget_given = false;
  double max_message_mb = static_cast<double>(kDefaultMaxMessageBytes >> 20);
  bool allow_no_secure_aggregation = false;
};
const OptionTable<JoinRequest>& join_option_fields();

/// `request.join` with the kit's values under the flags. Throws flynn::Error for a
/// coordinator's kit, or a required flag that neither the flags nor the kit give.
JoinOptions join_options_with_kit(const JoinRequest& request);

/// A party's flags, as `join` passes them on (the coordinator's settings are the defaults).
struct JoiningParty {
  PartyFiles files;             ///< data, load options, schema and statistics files
  bool missing_given = false;   ///< files.load.missing was given (else the coordinator's)
  HyperParams hyper;            ///< the hyper-parameters given
  DpGiven dp;                   ///< the DP settings given
  int threads = 0;
  /// A failure met before joining (a flag that did not parse): it stops every party, like
  /// a file that cannot be read (run_party_from_files' local_error).
  std::string local_error;
  /// "joined as 'alice', rank 0 of 3 (secure aggregation on)", once joined; may be empty.
  std::function<void(const std::string&)> log;
  ProgressFn progress;          ///< local training
};

/// What a party that took part in a federation knows at the end.
struct JoinOutcome {
  PartyRun run;
  std::string server = {};                ///< the coordinator's address
  int rank = 0;
  std::vector<std::string> names = {};    ///< every party's certificate CN, by rank
  bool secure_aggregation = true;
  double seconds = 0;                ///< from connecting to the end
  double masking_seconds = 0;
  WireTraffic wire = {};
  std::optional<DpParams> dp = {};        ///< the settings the party trained with
  std::string ledger = {};                ///< its budget ledger, "" = none
  double budget = 0;                 ///< the ledger's budget
};

/// Joins the federation of `request` — first waiting for the coordinator to listen
/// (retrying with backoff until --deadline) and making one TLS handshake of its own that
/// names the cause of a failure (unknown CA, name mismatch, expired, refused by the
/// coordinator) —, trains `party`'s rows and ends with the federation's
/// model (written to request.model). On a failure the coordinator (and through it every
/// party) is told the federation's reason, and the error is rethrown (local_detail_line
/// then gives this party's own detail, when it kept one). Checks that need no coordinator
/// (the model path, --dp-ledger with --dp-budget) come first.
JoinOutcome join_federation(const JoinRequest& request, JoiningParty party);

/// `flynn federated join --check`: what join_federation would refuse of this party before
/// or at the start of a federation, found without a coordinator — the kit and TLS files
/// (this party's certificate expired, the policy it cannot meet), the model's folder, and
/// the data examined against the settings this party knows (its own flags, the kit's
/// labels and parties; check_party_files) — every problem at once.
PartyFilesCheck check_before_joining(const JoinRequest& request, const JoiningParty& party);

}  // namespace flynn::federated
