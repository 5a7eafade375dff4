// flynn federated join: one party of a cross-silo federation over gRPC with mutual TLS.
// The party connects to `flynn federated serve`, receives the federation's settings,
// runs the same party protocol as over MPI or threads, and writes the model.
#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "flynn/build_config.hpp"
#include "commands.hpp"
#include "cmd_federated_common.hpp"
#include "federated_grpc_cli.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/budget_ledger.hpp"
#include "flynn/federated/grpc.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/settings_table.hpp"

namespace flynn::cli {

namespace {

#if FLYNN_HAVE_GRPC

using namespace flynn::federated;

struct JoinCliOptions {
  std::string server, ca, cert, key, data, model, server_name, ledger, crl;
  double deadline = 600, budget = 0;
  double max_message_mb = static_cast<double>(kDefaultMaxMessageBytes >> 20);
  CLI::Option* budget_opt = nullptr;
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
  DpOptions dp;
  FeatureStatsOption feature_stats;
  SchemaOption schema;
  // This party's policy on what the coordinator tells it (JoinOptions, checked before any
  // data-dependent byte leaves the party).
  int min_parties = kDefaultMinParties;
  std::vector<std::string> expect_parties;
  bool allow_no_secure_aggregation = false;
};

nlohmann::json party_reports_json(const std::vector<PartyReport>& reports,
                                  const std::vector<std::string>& names) {
  nlohmann::json a = nlohmann::json::array();
  for (const PartyReport& r : reports) {
    Traffic all = r.control_traffic;
    all += r.aggregate_traffic;
    nlohmann::json p = {{"rank", r.rank},
                        {"name", names[r.rank]},
                        {"bytes_sent", all.bytes_sent},
                        {"bytes_received", all.bytes_received},
                        {"model_crc32", fmt::format("{:08x}", r.model_crc32)}};
    // Rows and timings (which track rows) are withheld under DP and secure aggregation.
    if (r.rows) p["rows"] = *r.rows;
    if (const auto& t = r.timings) {
      p["seconds_training"] = t->training;
      p["seconds_local"] = t->setup + t->local + t->privatize;
      p["seconds_aggregate"] = t->aggregate;
    }
    a.push_back(p);
  }
  return a;
}

void join_command(const JoinCliOptions& o) {
  // Checks that need no coordinator come first, so a misconfigured party fails at once.
  check_writable_output(o.model, "--model");
  if (!o.ledger.empty() != (o.budget_opt->count() > 0))
    throw Error("--dp-ledger and --dp-budget go together");
  if (!(o.max_message_mb >= 1 && o.max_message_mb <= 2047))
    throw Error(fmt::format("--max-message-mb {}: must be in [1, 2047]", o.max_message_mb));
  const HyperParams my_hyper = o.hyper.params();

  JoinOptions jo;
  jo.server = o.server;
  jo.tls = {o.ca, o.cert, o.key};
  jo.deadline_seconds = o.deadline;
  jo.max_message_bytes = static_cast<std::size_t>(o.max_message_mb * (1 << 20));
  jo.server_name = o.server_name;
  jo.min_parties = o.min_parties;
  jo.expect_parties = o.expect_parties;
  jo.require_secure_aggregation = !o.allow_no_secure_aggregation;
  jo.crl = o.crl;
  const auto t_start = std::chrono::steady_clock::now();
  std::unique_ptr<GrpcParty> comm = GrpcParty::join(jo);
  const std::string me = comm->names()[comm->rank()];
  if (!o.common.quiet)
    std::fprintf(stderr, "flynn join: joined as '%s', rank %d of %d (secure aggregation %s)\n",
                 me.c_str(), comm->rank(), comm->size(), comm->secure_aggregation() ? "on" : "off");

  // Everything that can go wrong locally becomes this party's error, which the agreement
  // step reports to every party (so all exit non-zero with the reason).
  FederationSettings settings;
  std::unique_ptr<Dataset> data;
  std::unique_ptr<BudgetLedger> ledger;
  std::string local_error;
  try {
    // The coordinator's settings with this party's flags, where given, on top (every
    // hyper-parameter of the table of settings, settings_table.hpp): a party that
    // disagrees is then named by the agreement step, field by field.
    settings.labels = comm->settings().labels;
    settings.hyper = with_given(comm->settings().hyper, my_hyper);
    settings.dp = o.dp.override(comm->settings().dp);
    settings.threads = o.common.threads;
    if (!o.ledger.empty() && !settings.dp)
      throw Error("this party keeps a DP budget ledger (--dp-ledger), but the federation "
                  "releases exact counts (no differential privacy): refusing");
    io::LoadOptions load = o.format.party_load_options();
    if (!o.format.missing_given() && comm->settings().missing) load.missing = *comm->settings().missing;
    settings.missing = load.missing;
    settings.feature_stats = o.feature_stats.load(o.format.max_input_bytes());
    settings.schema = o.schema.load(o.format.max_input_bytes());
    Dataset d = load_party_rows(o.data, load, settings.schema, o.schema, settings.dp.has_value());
    if (!o.ledger.empty()) {
      // Keyed by the records as loaded (budget_ledger.hpp), so the same rows in another
      // order, spelling or file share the budget; entries of older ledgers, keyed by the
      // file's bytes, still count for this very file.
      ledger = std::make_unique<BudgetLedger>(o.ledger, records_fingerprint(d), o.budget,
                                              std::vector<std::string>{file_fingerprint(o.data)});
      const DpUnit unit = settings.dp->unit;
      const std::string note = fmt::format("federation at {} as '{}'", o.server, me);
      BudgetLedger* l = ledger.get();
      settings.approve_release = [l, unit, note](const PrivacyAccount& a) { l->charge(a, unit, note); };
    }
    data = std::make_unique<Dataset>(std::move(d));
  } catch (const std::exception& e) {
    data.reset();
    local_error = e.what();
  }
  PartyInput input;
  input.data = data.get();
  input.error = local_error;

  ProgressBar bar("local training", !o.common.quiet && !o.common.json);
  settings.progress = bar.callback();
  std::string file;
  try {
    PartyResult result = train_party(*comm, input, settings);
    bar.finish();
    const std::vector<PartyReport> reports = compare_models(*comm, result, file);
    std::string write_error;
    try {
      io::write_file_atomic(o.model, file);
    } catch (const std::exception& e) {
      write_error = e.what();
    }
    agree_on_status(*comm, write_error, "writing the model");
    comm->finish(file);
    const double seconds = seconds_since(t_start);

    const WireTraffic& wire = comm->wire_traffic();
    const FlyConfig& c = result.model.config();
    if (o.common.json) {
      nlohmann::json privacy = nullptr;
      if (result.privacy)
        privacy = {{"epsilon_total", result.privacy->total},
                   {"epsilon_per_party", result.privacy->per_party},
                   {"T", result.privacy->T},
                   {"exponent", dp_exponent_name(settings.dp->exponent)},
                   {"unit", dp_unit_name(settings.dp->unit)},
                   {"postprocess", dp_postprocess_name(settings.dp->postprocess)},
                   {"ledger", o.ledger.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.ledger)},
                   {"ledger_spent", ledger ? nlohmann::json(ledger->spent()) : nlohmann::json(nullptr)}};
      print_json({{"command", "federated join"},
                  {"server", o.server},
                  {"name", me},
                  {"rank", comm->rank()},
                  {"parties", comm->size()},
                  {"names", comm->names()},
                  {"secure_aggregation", comm->secure_aggregation()},
                  {"rows", result.rows},
                  {"config", config_json(c)},
                  {"seed_drawn_by_party_0", result.seed_drawn},
                  {"model", o.model},
                  {"model_bytes", file.size()},
                  {"model_crc32", fmt::format("{:08x}", io::model_checksum(file))},
                  {"identical_on_all_parties", true},
                  {"seconds", seconds},
                  {"seconds_training", result.timings.training},
                  {"seconds_aggregate", result.timings.aggregate},
                  {"seconds_masking", comm->masking_seconds()},
                  {"wire_bytes", wire_json(wire)},
                  {"parties_detail", party_reports_json(reports, comm->names())},
                  {"differential_privacy", privacy}});
      return;
    }
    std::cout << fmt::format("federated training over gRPC: '{}' is rank {} of {}; secure "
                             "aggregation {}; seed {} ({})\n",
                             me, comm->rank(), comm->size(), comm->secure_aggregation() ? "on" : "off",
                             c.seed, result.seed_drawn ? "drawn by party 0" : "given with --seed")
              << fmt::format("config: {}\n", c.describe())
              << fmt::format("this party: {} rows, training {:.3f} s, total {:.3f} s, sent {}, "
                             "received {} (gRPC messages)\n",
                             result.rows, result.timings.training, seconds,
                             human_bytes(wire.bytes_sent), human_bytes(wire.bytes_received));
    if (result.privacy)
      std::cout << fmt::format("differential privacy ({} unit): this party spent epsilon {:.6g}; "
                               "the federation is {:.6g}-DP{}\n",
                               dp_unit_name(settings.dp->unit), result.privacy->per_party,
                               result.privacy->total,
                               ledger ? fmt::format("; ledger {}: {:.6g} of {:.6g} spent", o.ledger,
                                                    ledger->spent(), o.budget)
                                      : "");
    std::cout << fmt::format("all {} parties hold the identical model (crc32 {:08x}, {})\n",
                             comm->size(), io::model_checksum(file), human_bytes(file.size()))
              << fmt::format("model: {}\n", o.model);
  } catch (const std::exception& e) {
    bar.finish();
    print_local_detail(e, "flynn join");
    // Tell the coordinator (and through it every party) why this party stops: the
    // federation's message, never the local detail.
    comm->fail(e.what());
    throw;
  }
}

void add_federated_join(CLI::App& app) {
  CLI::App* group = command_group(app, "federated", "Federated FlyNN (FlyNNFL)");
  auto o = std::make_shared<JoinCliOptions>();
  CLI::App* cmd = group->add_subcommand(
      "join",
      "Take part in a federation coordinated by 'flynn federated serve' (gRPC, mutual TLS): "
      "train on this party's rows, end with the federation's model");
  cmd->add_option("--server", o->server, "HOST:PORT of the coordinator")->required();
  cmd->add_option("--ca", o->ca, "CA certificate (PEM) that signed the coordinator's certificate")->required();
  cmd->add_option("--cert", o->cert, "This party's certificate (PEM); its subject CN is the party's name")
      ->required();
  cmd->add_option("--key", o->key, "This party's private key (PEM)")->required();
  cmd->add_option("--data", o->data, "This party's rows (labelled)")->required();
  cmd->add_option("--model", o->model, "Where to write the federation's model")->required();
  cmd->add_option("--deadline", o->deadline,
                  "Longest wait for any answer of the coordinator, and for it to accept any one "
                  "message, seconds (default 600)");
  cmd->add_option("--server-name", o->server_name,
                  "Name to check the coordinator's certificate against (default: the host of --server)");
  cmd->add_option("--crl", o->crl, "Certificate revocation list of the CA (PEM): a revoked coordinator is refused");
  cmd->add_option("--max-message-mb", o->max_message_mb, "Largest gRPC message in MiB (default 512)");
  cmd->add_option("--min-parties", o->min_parties,
                  "Refuse a federation of fewer parties, this one included (default 3: with 2, "
                  "each party learns the other's counts from the sum)")
      ->group("Party policy");
  cmd->add_option("--expect-parties", o->expect_parties,
                  "CNs of the parties this party agrees to federate with, itself included: the "
                  "coordinator's list must be exactly these (default: any certificate of the CA)")
      ->delimiter(',')
      ->group("Party policy");
  cmd->add_flag("--allow-no-secure-aggregation", o->allow_no_secure_aggregation,
                "Accept a federation without secure aggregation (the coordinator then sees this "
                "party's exact counts); refused by default")
      ->group("Party policy");
  cmd->add_option("--dp-ledger", o->ledger,
                  "DP budget ledger file of this party: every release is recorded, keyed by the "
                  "records of --data (the same rows in any order, spelling or file are the same "
                  "data); a release beyond --dp-budget is refused")
      ->group("Differential privacy");
  o->budget_opt = cmd->add_option("--dp-budget", o->budget,
                                  "Total epsilon this data may spend across runs (with --dp-ledger)")
                      ->group("Differential privacy");
  o->hyper.add_to(cmd);
  o->hyper.option("m")->description(
      "FlyHash dimension m. Hyper-parameters default to the coordinator's; a party that "
      "gives one must agree with the others (the federation names any field that differs)");
  o->format.add_to(cmd);
  o->format.missing_opt->description(
      "Missing cells (empty, NA, ?, nan): mean, zero or error; default: the coordinator's "
      "--missing, else mean (the training mean of the federation, stored in the model)");
  o->feature_stats.add_to(cmd);
  o->schema.add_to(cmd);
  o->dp.add_to(cmd, "Expected privacy budget (default: the coordinator's); must agree");
  o->common.add_to(cmd);
  cmd->callback([o] { join_command(*o); });
}

const RegisterCommand registered(62, add_federated_join);

#endif  // FLYNN_HAVE_GRPC

}  // namespace

}  // namespace flynn::cli
