// flynn federated join: one party of a cross-silo federation over gRPC with mutual TLS.
// The party connects to `flynn federated serve`, receives the federation's settings,
// runs the same party protocol as over MPI or threads (federated::run_party_from_files),
// and writes the model.
#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "flynn/build_config.hpp"
#include "commands.hpp"
#include "cmd_federated_common.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/federated_report.hpp"
#include "flynn/federated/grpc.hpp"

namespace flynn::cli {

namespace {

#if FLYNN_HAVE_GRPC

using namespace flynn::federated;

struct JoinCliOptions {
  JoinOptions join;  // this party's policy on what the coordinator tells it (grpc.hpp)
  std::string data, model, ledger;
  double budget = 0, max_message_mb = static_cast<double>(kDefaultMaxMessageBytes >> 20);
  bool allow_no_secure_aggregation = false;
  CLI::Option* budget_opt = nullptr;
  PartyOptions party;
};

void join_command(const JoinCliOptions& o) {
  // Checks that need no coordinator come first, so a misconfigured party fails at once.
  check_writable_output(o.model, "--model " + o.model);
  if (!o.ledger.empty() != (o.budget_opt->count() > 0)) throw Error("--dp-ledger and --dp-budget go together");
  JoinOptions jo = o.join;
  jo.max_message_bytes = max_message_bytes_from_mib(o.max_message_mb);
  jo.require_secure_aggregation = !o.allow_no_secure_aggregation;
  const HyperParams my_hyper = o.party.hyper.params();
  const auto t_start = std::chrono::steady_clock::now();
  std::unique_ptr<GrpcParty> comm = GrpcParty::join(jo);
  const std::string me = comm->names()[comm->rank()];
  if (!o.party.common.quiet)
    std::fprintf(stderr, "flynn join: joined as '%s', rank %d of %d (secure aggregation %s)\n", me.c_str(),
                 comm->rank(), comm->size(), comm->secure_aggregation() ? "on" : "off");

  // The coordinator's settings with this party's flags, where given, on top: a party that
  // disagrees is then named by the agreement step, field by field.
  FederationSettings settings;
  PartyFiles files;
  std::string error;
  try {
    settings.labels = comm->settings().labels;
    settings.hyper = with_given(comm->settings().hyper, my_hyper);
    settings.dp = dp_params_over(comm->settings().dp, o.party.dp.given());
    settings.threads = o.party.common.threads;
    files = o.party.files(o.data, o.model);
    if (!o.party.format.missing_given() && comm->settings().missing) files.load.missing = *comm->settings().missing;
    files.ledger = o.ledger;
    files.ledger_budget = o.budget;
    files.ledger_note = fmt::format("federation at {} as '{}'", jo.server, me);
  } catch (const std::exception& e) {
    error = e.what();
  }
  ProgressBar bar("local training", !o.party.common.quiet && !o.party.common.json);
  settings.progress = bar.callback();
  try {
    const PartyRun run = run_party_from_files(*comm, files, settings, error);
    bar.finish();
    comm->finish(run.model_file);
    const experiments::JoinedParty p{jo.server, comm->rank(), comm->names(), comm->secure_aggregation(),
                                     seconds_since(t_start), comm->masking_seconds(), comm->wire_traffic(),
                                     settings.dp, o.ledger, o.budget};
    if (o.party.common.json) {
      nlohmann::json j = experiments::joined_party_json(run, p);
      j.update({{"command", "federated join"}, {"model", o.model}});
      print_json(j);
    } else {
      std::cout << experiments::joined_party_text(run, p) << fmt::format("model: {}\n", o.model);
    }
  } catch (const std::exception& e) {
    bar.finish();
    const std::string detail = local_detail_line(e, "flynn join");
    if (!detail.empty()) std::fprintf(stderr, "%s\n", detail.c_str());
    // Tell the coordinator (and through it every party) why this party stops: the
    // federation's message, never the local detail.
    comm->fail(e.what());
    throw;
  }
}

void add_federated_join(CLI::App& app) {
  auto o = std::make_shared<JoinCliOptions>();
  JoinOptions& jo = o->join;
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "join",
      "Take part in a federation coordinated by 'flynn federated serve' (gRPC, mutual TLS): train on this "
      "party's rows, end with the federation's model");
  cmd->add_option("--server", jo.server, "HOST:PORT of the coordinator")->required();
  cmd->add_option("--ca", jo.tls.ca, "CA certificate (PEM) that signed the coordinator's certificate")->required();
  cmd->add_option("--cert", jo.tls.cert, "This party's certificate (PEM); its subject CN is the party's name")
      ->required();
  cmd->add_option("--key", jo.tls.key, "This party's private key (PEM)")->required();
  cmd->add_option("--data", o->data, "This party's rows (labelled)")->required();
  cmd->add_option("--model", o->model, "Where to write the federation's model")->required();
  cmd->add_option("--deadline", jo.deadline_seconds,
                  "Longest wait for any answer of the coordinator, and for it to accept any one message, seconds "
                  "(default 600)");
  cmd->add_option("--server-name", jo.server_name,
                  "Name to check the coordinator's certificate against (default: the host of --server)");
  cmd->add_option("--crl", jo.crl, "Certificate revocation list of the CA (PEM): a revoked coordinator is refused");
  cmd->add_option("--max-message-mb", o->max_message_mb, "Largest gRPC message in MiB (default 512)");
  const char* policy = "Party policy";
  cmd->add_option("--min-parties", jo.min_parties,
                  "Refuse a federation of fewer parties, this one included (default 3: with 2, each party "
                  "learns the other's counts from the sum)")
      ->group(policy);
  cmd->add_option("--expect-parties", jo.expect_parties,
                  "CNs of the parties this party agrees to federate with, itself included: the coordinator's "
                  "list must be exactly these (default: any certificate of the CA)")
      ->delimiter(',')
      ->group(policy);
  cmd->add_flag("--allow-no-secure-aggregation", o->allow_no_secure_aggregation,
                "Accept a federation without secure aggregation (the coordinator then sees this party's exact "
                "counts); refused by default")
      ->group(policy);
  cmd->add_option("--dp-ledger", o->ledger,
                  "DP budget ledger file of this party: every release is recorded, keyed by the records of "
                  "--data (the same rows in any order, spelling or file are the same data); a release beyond "
                  "--dp-budget is refused")
      ->group("Differential privacy");
  o->budget_opt = cmd->add_option("--dp-budget", o->budget, "Total epsilon this data may spend across runs (with "
                                  "--dp-ledger)")->group("Differential privacy");
  o->party.add_to(cmd, "Expected privacy budget (default: the coordinator's); must agree");
  o->party.hyper.option("m")->description(
      "FlyHash dimension m. Hyper-parameters default to the coordinator's; a party that gives one must agree "
      "with the others (the federation names any field that differs)");
  o->party.format.missing_opt->description(
      "Missing cells (empty, NA, ?, nan): mean, zero or error; default: the coordinator's --missing, else mean "
      "(the training mean of the federation, stored in the model)");
  cmd->callback([o] { join_command(*o); });
}

const RegisterCommand registered(62, add_federated_join);

#endif  // FLYNN_HAVE_GRPC

}  // namespace

}  // namespace flynn::cli
