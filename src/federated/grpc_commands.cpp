#include "flynn/federated/grpc_commands.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <fstream>
#include <iterator>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "federated/grpc_reachability.hpp"
#include "federated/grpc_welcome_check.hpp"
#include "flynn/federated/key_binding.hpp"
#include "flynn/federated/provision.hpp"

namespace flynn::federated {

const OptionTable<ServeRequest>& serve_option_fields() {
  using R = ServeRequest;
  static const OptionTable<R> table = {
      {"--kit",
       "The coordinator's kit folder (written by 'flynn federated provision'): gives --listen, --parties, --ca, "
       "--cert, --key, --crl, --allow and --labels, each unless given",
       &R::kit},
      {"--listen", "HOST:PORT to listen on (port 0: any free port); required without --kit",
       [](R& r) -> auto& { return r.coordinator.listen; }},
      {"--parties", "Number of parties; the federation starts when all joined; required without --kit",
       [](R& r) -> auto& { return r.coordinator.parties; }},
      {"--ca", "CA certificate (PEM) that signed every party's certificate; required without --kit",
       [](R& r) -> auto& { return r.coordinator.tls.ca; }},
      {"--cert", "The coordinator's certificate (PEM); required without --kit",
       [](R& r) -> auto& { return r.coordinator.tls.cert; }},
      {"--key", "The coordinator's private key (PEM); required without --kit",
       [](R& r) -> auto& { return r.coordinator.tls.key; }},
      {"--allow", "Comma-separated certificate CNs allowed to join (default: the kit's parties, else any "
       "certificate of the CA)", &R::allow},
      {"--deadline",
       "Seconds every phase may take: all parties joining, and each collective from its first contribution "
       "(default 300)",
       [](R& r) -> auto& { return r.coordinator.deadline_seconds; }},
      {"--join-timeout",
       "Seconds a connection may take from connecting to an accepted Join; it is closed after that (default 10)",
       [](R& r) -> auto& { return r.coordinator.join_timeout_seconds; }},
      {"--crl", "Certificate revocation list of the CA (PEM): parties with a revoked certificate are refused",
       [](R& r) -> auto& { return r.coordinator.crl; }},
      {"--secure-aggregation", "on (default): parties mask their counts so the coordinator learns only sums; off",
       &R::secure_aggregation},
      {"--max-message-mb",
       "The transport's cap on one gRPC message in MiB (default 512); contributions are held to less (a sum to "
       "its first contribution's size)",
       &R::max_message_mb},
      {"--labels", "The federation's full label list L1,L2,... (required unless the kit gives it)", &R::labels},
      {"--model", "Also write the federation's model here (sent by rank 0)", &R::model},
      {"--missing",
       "Missing cells of the parties' tables: mean (the federation's training mean), zero or error; sent to every "
       "party (default: each party's --missing, else mean)",
       &R::missing},
  };
  return table;
}

namespace {

template <class T>
void fill(T& value, const T& from_kit) {
  if (value == T{}) value = from_kit;
}

// The file's bytes ("" when unreadable: GrpcParty::join names the file).
std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void require(bool given, const char* flag) {
  if (!given) throw Error(fmt::format("{} is required (or --kit DIR, a kit written by 'flynn federated provision')", flag));
}

}  // namespace

CoordinatorOptions ServeRequest::options(const HyperParams& hyper, const std::optional<DpParams>& dp) const {
  CoordinatorOptions c = coordinator;
  std::string allow_list = allow, label_list = labels;
  if (!kit.empty()) {
    const SiteKit k = read_kit(kit);
    if (k.role != "coordinator")
      throw Error(fmt::format("--kit {}: the kit of the party '{}', not a coordinator's (use it with 'flynn "
                              "federated join --kit')",
                              kit, k.name));
    fill(c.listen, k.coordinator);
    fill(c.parties, static_cast<int>(k.parties.size()));
    fill(c.tls.ca, k.ca);
    fill(c.tls.cert, k.cert);
    fill(c.tls.key, k.key);
    fill(c.crl, k.crl);
    if (allow_list.empty()) c.allow = k.parties;
    fill(label_list, k.labels);
  }
  require(!c.listen.empty(), "--listen");
  require(c.parties != 0, "--parties");
  require(!c.tls.ca.empty(), "--ca");
  require(!c.tls.cert.empty(), "--cert");
  require(!c.tls.key.empty(), "--key");
  require(!label_list.empty(), "--labels");
  if (!allow_list.empty()) c.allow = parse_name_list(allow_list);
  if (secure_aggregation != "on" && secure_aggregation != "off")
    throw Error(fmt::format("--secure-aggregation '{}': expected on or off", secure_aggregation));
  c.secure_aggregation = secure_aggregation == "on";
  c.max_message_bytes = max_message_bytes_from_mib(max_message_mb);
  // Everything the parties must agree on travels in the Welcome (settings.hpp).
  c.settings.labels = LabelSet::parse_list(label_list);
  c.settings.hyper = hyper;
  if (!missing.empty()) c.settings.missing = parse_missing_policy(missing);
  c.settings.dp = dp;
  if (!model.empty()) {
    check_writable_output(model, "--model " + model);
    c.wants_model = true;
  }
  return c;
}

const OptionTable<JoinRequest>& join_option_fields() {
  using R = JoinRequest;
  const char *policy = "Party policy", *dp = "Differential privacy";
  static const OptionTable<R> table = {
      {"--kit",
       "This party's kit folder (written by 'flynn federated provision'): gives --server, --server-name, --ca, "
       "--cert, --key, --crl, --expect-parties and --min-parties, each unless given",
       &R::kit},
      {"--server", "HOST:PORT of the coordinator; required without --kit", [](R& r) -> auto& { return r.join.server; }},
      {"--ca", "CA certificate (PEM) that signed the coordinator's certificate; required without --kit",
       [](R& r) -> auto& { return r.join.tls.ca; }},
      {"--cert", "This party's certificate (PEM); its subject CN is the party's name; required without --kit",
       [](R& r) -> auto& { return r.join.tls.cert; }},
      {"--key", "This party's private key (PEM); required without --kit", [](R& r) -> auto& { return r.join.tls.key; }},
      {"--data", "This party's rows (labelled)", &R::data, "", true},
      {"--model", "Where to write the federation's model (required, except with --check)", &R::model},
      {"--test",
       "This party's held-out rows (labelled): after training, the parties sum their confusion matrices by secure "
       "aggregation (federated evaluation) and each learns the federation's accuracy, balanced accuracy and "
       "confusion matrix, not another party's",
       &R::test},
      {"--deadline",
       "Longest wait for the coordinator, seconds (default 600): connecting and the TLS handshake, any answer, "
       "taking any one message; giving up then takes at most 2 s more",
       [](R& r) -> auto& { return r.join.deadline_seconds; }},
      {"--server-name", "Name to check the coordinator's certificate against (default: the host of --server)",
       [](R& r) -> auto& { return r.join.server_name; }},
      {"--crl",
       "Certificate revocation list of the CA (PEM): a revoked coordinator, or a revoked party in the welcome, is "
       "refused",
       [](R& r) -> auto& { return r.join.crl; }},
      {"--max-message-mb",
       "The transport's cap on one gRPC message in MiB (default 512); this party accepts only what the agreed "
       "configuration implies",
       &R::max_message_mb},
      {"--min-parties",
       "Refuse a federation of fewer parties, this one included (default 3: with 2, each party learns the other's "
       "counts from the sum)",
       [](R& r) -> auto& { return r.join.min_parties; }, policy},
      {"--expect-parties",
       "CNs of the parties this party agrees to federate with, itself included: the coordinator's list must be "
       "exactly these (default: any certificate of the CA)",
       [](R& r) -> auto& { return r.join.expect_parties; }, policy},
      {"--allow-no-secure-aggregation",
       "Accept a federation without secure aggregation (the coordinator then sees this party's exact counts); "
       "refused by default",
       &R::allow_no_secure_aggregation, policy},
      {"--dp-ledger",
       "DP budget ledger file of this party: every release is recorded, keyed by the records of --data (the same "
       "rows in any order, spelling or file are the same data); a release beyond --dp-budget is refused",
       &R::ledger, dp},
      {"--dp-budget", "Total epsilon this data may spend across runs (with --dp-ledger)", &R::budget, dp, false, {},
       {}, false, [](R& r) -> bool& { return r.budget_given; }},
  };
  return table;
}

namespace {

// The kit of --kit, read once (none without the flag).
std::optional<SiteKit> requested_kit(const JoinRequest& request) {
  if (request.kit.empty()) return std::nullopt;
  return read_kit(request.kit);
}

JoinOptions join_options_with(const JoinRequest& request, const std::optional<SiteKit>& kit) {
  JoinOptions jo = request.join;
  if (kit) {
    const SiteKit& k = *kit;
    if (k.role != "party")
      throw Error(fmt::format("--kit {}: the coordinator's kit, not a party's (use it with 'flynn federated serve "
                              "--kit')",
                              request.kit));
    fill(jo.server, k.coordinator);
    fill(jo.server_name, k.server_name);
    fill(jo.tls.ca, k.ca);
    fill(jo.tls.cert, k.cert);
    fill(jo.tls.key, k.key);
    fill(jo.crl, k.crl);
    fill(jo.expect_parties, k.parties);
    if (jo.min_parties == kDefaultMinParties) jo.min_parties = k.min_parties;
  }
  require(!jo.server.empty(), "--server");
  require(!jo.tls.ca.empty(), "--ca");
  require(!jo.tls.cert.empty(), "--cert");
  require(!jo.tls.key.empty(), "--key");
  return jo;
}

}  // namespace

JoinOptions join_options_with_kit(const JoinRequest& request) {
  return join_options_with(request, requested_kit(request));
}

PartyFilesCheck check_before_joining(const JoinRequest& request, const JoiningParty& party) {
  std::vector<std::string> problems;
  // Runs one check; false (its error listed) when it threw.
  const auto attempt = [&](const std::function<void()>& step) {
    try {
      step();
      return true;
    } catch (const std::exception& e) {
      problems.emplace_back(e.what());
      return false;
    }
  };
  FederationSettings settings;
  int parties = std::max(request.join.min_parties, static_cast<int>(request.join.expect_parties.size()));
  // The kit is read once: one that cannot be read is one problem, and the options it would
  // give are then not checked.
  std::optional<SiteKit> kit;
  const bool kit_readable = attempt([&] { kit = requested_kit(request); });
  const auto check_options = [&] {
    const JoinOptions jo = join_options_with(request, kit);
    parties = std::max(jo.min_parties, static_cast<int>(jo.expect_parties.size()));
    const PartyPems pems{read_text(jo.tls.ca), read_text(jo.tls.cert), read_text(jo.tls.key)};
    for (const auto& [flag, path, text] : {std::tuple{"--ca", jo.tls.ca, pems.ca}, {"--cert", jo.tls.cert, pems.cert},
                                           {"--key", jo.tls.key, pems.key}})
      if (text.empty()) problems.push_back(fmt::format("{} {}: cannot be read (or is empty)", flag, path));
    const std::string& cert = pems.cert;
    if (cert.empty()) return;
    check_own_validity(cert);
    check_join_policy(jo, certificate_common_name(cert));
  };
  if (kit_readable) attempt(check_options);
  if (kit && !kit->labels.empty()) attempt([&] { settings.labels = LabelSet::parse_list(kit->labels); });
  if (!request.ledger.empty() != request.budget_given) problems.emplace_back("--dp-ledger and --dp-budget go together");
  if (!party.local_error.empty()) problems.push_back(party.local_error);
  attempt([&] {
    settings.hyper = party.hyper;
    settings.dp = dp_params_from_given(party.dp);
  });
  PartyFiles files = party.files;
  files.model = request.model;
  files.test = request.test;
  files.ledger = request.ledger;
  PartyFilesCheck check = check_party_files(files, settings, parties);
  problems.insert(problems.end(), check.problems.begin(), check.problems.end());
  check.problems = std::move(problems);
  return check;
}

JoinOutcome join_federation(const JoinRequest& request, JoiningParty party) {
  // Checks that need no coordinator come first, so a misconfigured party fails at once.
  JoinOptions jo = join_options_with_kit(request);

  if (request.model.empty()) throw Error("--model is required: where to write the federation's model");
  check_writable_output(request.model, "--model " + request.model);
  if (!request.ledger.empty() != request.budget_given) throw Error("--dp-ledger and --dp-budget go together");
  jo.max_message_bytes = max_message_bytes_from_mib(request.max_message_mb);
  jo.require_secure_aggregation = !request.allow_no_secure_aggregation;
  const auto t_start = std::chrono::steady_clock::now();
  // A policy that cannot hold fails before any wait for the coordinator.
  const std::string cert = read_text(jo.tls.cert);
  if (!cert.empty()) check_join_policy(jo, certificate_common_name(cert));
  wait_for_coordinator(jo, {read_text(jo.tls.ca), cert, read_text(jo.tls.key)}, party.log);
  std::unique_ptr<GrpcParty> comm = GrpcParty::join(jo);
  const std::string me = comm->names()[comm->rank()];
  if (party.log)
    party.log(fmt::format("joined as '{}', rank {} of {} (secure aggregation {})", me, comm->rank(), comm->size(),
                          comm->secure_aggregation() ? "on" : "off"));

  // The coordinator's settings with this party's flags, where given, on top: a party that
  // disagrees is then named by the agreement step, field by field. A flag that does not
  // parse is this party's error, which the agreement step reports to every party.
  FederationSettings settings;
  PartyFiles& files = party.files;
  std::string error = party.local_error;
  try {
    settings.labels = comm->settings().labels;
    settings.hyper = with_given(comm->settings().hyper, party.hyper);
    settings.dp = dp_params_over(comm->settings().dp, party.dp);
    settings.threads = party.threads;
    files.data = request.data;
    files.model = request.model;
    files.test = request.test;
    if (!party.missing_given && comm->settings().missing) files.load.missing = *comm->settings().missing;
    files.ledger = request.ledger;
    files.ledger_budget = request.budget;
    files.ledger_note = fmt::format("federation at {} as '{}'", jo.server, me);
  } catch (const std::exception& e) {
    error = e.what();
  }
  settings.progress = party.progress;
  try {
    // The model is committed only after the coordinator's Done (finish): an Abort at the
    // end, or anything else, leaves no file behind.
    PartyRun run = run_party_from_files(*comm, files, settings, error,
                                        [&comm](const PartyRun& r) { comm->finish(r.model_file); });
    JoinOutcome out{std::move(run)};
    out.server = jo.server;
    out.rank = comm->rank();
    out.names = comm->names();
    out.secure_aggregation = comm->secure_aggregation();
    out.seconds = detail::seconds_since(t_start);
    out.masking_seconds = comm->masking_seconds();
    out.wire = comm->wire_traffic();
    out.dp = settings.dp;
    out.ledger = request.ledger;
    out.budget = request.budget;
    return out;
  } catch (const std::exception& e) {
    // Tell the coordinator (and through it every party) why this party stops: the
    // federation's message, never the local detail.
    comm->fail(e.what());
    throw;
  }
}

}  // namespace flynn::federated
