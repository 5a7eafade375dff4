// flynn federated join: one party of a cross-silo federation over gRPC with mutual TLS.
// The party connects to `flynn federated serve`, receives the federation's settings,
// runs the same party protocol as over MPI or threads, and writes the model.
#include <cstdio>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
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
};

// The coordinator's hyper-parameters with this party's flags, where given, on top: a
// party that disagrees is then named by the agreement step, field by field.
HyperParams overridden(HyperParams base, const HyperParams& mine) {
  if (mine.m) base.m = mine.m;
  if (mine.expansion_factor) base.expansion_factor = mine.expansion_factor;
  if (mine.s) base.s = mine.s;
  if (mine.connection_sparsity) base.connection_sparsity = mine.connection_sparsity;
  if (mine.rho) base.rho = mine.rho;
  if (mine.wta_ratio) base.wta_ratio = mine.wta_ratio;
  if (mine.wta_nnz) base.wta_nnz = mine.wta_nnz;
  if (mine.gamma) base.gamma = mine.gamma;
  if (mine.seed) base.seed = mine.seed;
  if (mine.preprocess) base.preprocess = mine.preprocess;
  return base;
}

nlohmann::json party_reports_json(const std::vector<PartyReport>& reports,
                                  const std::vector<std::string>& names) {
  nlohmann::json a = nlohmann::json::array();
  for (const PartyReport& r : reports) {
    Traffic all = r.control_traffic;
    all += r.aggregate_traffic;
    nlohmann::json p = {{"rank", r.rank},
                        {"name", names[r.rank]},
                        {"seconds_training", r.timings.training},
                        {"seconds_local", r.timings.setup + r.timings.local + r.timings.privatize},
                        {"seconds_aggregate", r.timings.aggregate},
                        {"bytes_sent", all.bytes_sent},
                        {"bytes_received", all.bytes_received},
                        {"model_crc32", fmt::format("{:08x}", r.model_crc32)}};
    if (r.rows) p["rows"] = *r.rows;
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
    settings.labels = comm->settings().labels;
    settings.hyper = overridden(comm->settings().hyper, my_hyper);
    settings.dp = o.dp.override(comm->settings().dp);
    settings.threads = o.common.threads;
    if (!o.ledger.empty()) {
      if (!settings.dp)
        throw Error("this party keeps a DP budget ledger (--dp-ledger), but the federation "
                    "releases exact counts (no differential privacy): refusing");
      ledger = std::make_unique<BudgetLedger>(o.ledger, file_fingerprint(o.data), o.budget);
      const DpUnit unit = settings.dp->unit;
      const std::string note = fmt::format("federation at {} as '{}'", o.server, me);
      BudgetLedger* l = ledger.get();
      settings.approve_release = [l, unit, note](const PrivacyAccount& a) { l->charge(a, unit, note); };
    }
    const io::LoadOptions load = o.format.party_load_options();
    settings.missing = load.missing;
    settings.feature_stats = o.feature_stats.load(o.format.max_input_bytes());
    Dataset d = io::load_dataset(o.data, load);
    if (!d.has_labels) throw Error(fmt::format("{}: training data needs a label column", o.data));
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
    // Tell the coordinator (and through it every party) why this party stops.
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
                  "Longest wait for any answer of the coordinator, seconds (default 600)");
  cmd->add_option("--server-name", o->server_name,
                  "Name to check the coordinator's certificate against (default: the host of --server)");
  cmd->add_option("--crl", o->crl, "Certificate revocation list of the CA (PEM): a revoked coordinator is refused");
  cmd->add_option("--max-message-mb", o->max_message_mb, "Largest gRPC message in MiB (default 512)");
  cmd->add_option("--dp-ledger", o->ledger,
                  "DP budget ledger file of this party: every release is recorded, keyed by the "
                  "SHA-256 of --data; a release beyond --dp-budget is refused")
      ->group("Differential privacy");
  o->budget_opt = cmd->add_option("--dp-budget", o->budget,
                                  "Total epsilon this data may spend across runs (with --dp-ledger)")
                      ->group("Differential privacy");
  o->hyper.add_to(cmd);
  o->hyper.m_opt->description(
      "FlyHash dimension m. Hyper-parameters default to the coordinator's; a party that "
      "gives one must agree with the others (the federation names any field that differs)");
  o->format.add_to(cmd);
  o->feature_stats.add_to(cmd);
  o->dp.add_to(cmd, "Expected privacy budget (default: the coordinator's); must agree");
  o->common.add_to(cmd);
  cmd->callback([o] { join_command(*o); });
}

const RegisterCommand registered(62, add_federated_join);

#endif  // FLYNN_HAVE_GRPC

}  // namespace

}  // namespace flynn::cli
