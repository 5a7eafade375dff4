// flynn federated train | simulate: FlyNNFL, for real over MPI or simulated on threads.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/experiments/cross_validation.hpp"
#include "flynn/federated/mpi.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/federated/split.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/detail/parallel.hpp"

namespace flynn::cli {

namespace {

namespace fs = std::filesystem;
using namespace flynn::federated;

// ---- options shared by both subcommands -----------------------------------------------------

struct DpOptions {
  double epsilon = 0;
  std::uint32_t T = 0;
  std::string exponent = "paper";
  CLI::Option *eps_opt = nullptr, *t_opt = nullptr;

  void add_to(CLI::App* cmd) {
    const char* g = "Differential privacy";
    eps_opt = cmd->add_option("--dp-epsilon", epsilon,
                              "Total privacy budget epsilon of the federation (each party "
                              "spends epsilon/parties); enables the DP release")
                  ->group(g);
    t_opt = cmd->add_option("--dp-T", T, "Entries each party releases (with --dp-epsilon)")->group(g);
    cmd->add_option("--dp-exponent", exponent,
                    "Exponential-mechanism exponent: 'paper' eps'*c/(4T) (default) or "
                    "'reference' eps'*c/(2T), see docs/federated.md")
        ->group(g);
  }
  // Throws on inconsistent flags; validation of the values is the protocol's (agreed).
  std::optional<DpParams> params() const {
    if (!eps_opt->count() && !t_opt->count()) return std::nullopt;
    if (!eps_opt->count() || !t_opt->count())
      throw Error("--dp-epsilon and --dp-T go together: give both for a DP release");
    DpParams p;
    p.epsilon = epsilon;
    p.T = T;
    p.exponent = parse_dp_exponent(exponent);
    p.validate();
    return p;
  }
};

nlohmann::json traffic_json(const Traffic& t) {
  return {{"sent", t.bytes_sent}, {"received", t.bytes_received}, {"collectives", t.collectives}};
}

nlohmann::json timings_json(const PartyTimings& t) {
  return {{"agree", t.agree},   {"setup", t.setup},       {"local", t.local},
          {"privatize", t.privatize}, {"wait", t.wait},   {"aggregate", t.aggregate},
          {"finalize", t.finalize},   {"training", t.training}, {"total", t.total}};
}

nlohmann::json reports_json(const std::vector<PartyReport>& reports,
                            const std::vector<std::uint64_t>& rows) {
  nlohmann::json a = nlohmann::json::array();
  for (const PartyReport& r : reports) {
    Traffic all = r.control_traffic;
    all += r.aggregate_traffic;
    nlohmann::json p = {{"rank", r.rank},
                        {"seconds", timings_json(r.timings)},
                        {"bytes_sent", all.bytes_sent},
                        {"bytes_received", all.bytes_received},
                        {"aggregation_bytes", traffic_json(r.aggregate_traffic)},
                        {"control_bytes", traffic_json(r.control_traffic)},
                        {"model_crc32", fmt::format("{:08x}", r.model_crc32)}};
    if (static_cast<std::size_t>(r.rank) < rows.size()) p["rows"] = rows[r.rank];
    else if (r.rows) p["rows"] = *r.rows;
    a.push_back(p);
  }
  return a;
}

nlohmann::json privacy_json(const std::optional<PrivacyAccount>& a, const std::optional<DpParams>& dp) {
  if (!a || !dp) return nullptr;
  return {{"epsilon_total", a->total},
          {"epsilon_per_party", a->per_party},
          {"epsilon_requested", dp->epsilon},
          {"epsilon_per_pick", a->per_pick},
          {"T", a->T},
          {"parties", a->parties},
          {"exponent", dp_exponent_name(dp->exponent)},
          {"composition", "Theorem 6: total = parties x T x (selection + noise) per pick"}};
}

void print_party_table(const std::vector<PartyReport>& reports,
                       const std::vector<std::uint64_t>& rows) {
  std::cout << fmt::format("{:>5} {:>9} {:>9} {:>9} {:>9} {:>10} {:>11} {:>11}  {}\n", "party",
                           "rows", "local s", "wait s", "aggr. s", "train s", "sent",
                           "received", "model crc32");
  for (const PartyReport& r : reports) {
    Traffic all = r.control_traffic;
    all += r.aggregate_traffic;
    std::string n = "-";
    if (static_cast<std::size_t>(r.rank) < rows.size()) n = std::to_string(rows[r.rank]);
    else if (r.rows) n = std::to_string(*r.rows);
    std::cout << fmt::format("{:>5} {:>9} {:>9.3f} {:>9.3f} {:>9.4f} {:>10.3f} {:>11} {:>11}  {:08x}\n",
                             r.rank, n, r.timings.setup + r.timings.local + r.timings.privatize,
                             r.timings.wait, r.timings.aggregate, r.timings.training,
                             human_bytes(all.bytes_sent), human_bytes(all.bytes_received),
                             r.model_crc32);
  }
}

void print_privacy(const std::optional<PrivacyAccount>& a, const std::optional<DpParams>& dp) {
  if (!a || !dp) return;
  std::cout << fmt::format(
      "differential privacy: epsilon spent {:.6g} in total, {:.6g} per party (T = {}, {} "
      "exponent; Theorem 6: {} parties x {} picks x {:.6g} per pick)\n",
      a->total, a->per_party, a->T, dp_exponent_name(dp->exponent), a->parties, a->T, a->per_pick);
}

// ---- flynn federated train ----------------------------------------------------------------------

struct TrainOptions {
  std::string data, labels, model, backend = "auto";
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
  DpOptions dp;
};

// Everything that can go wrong before the protocol starts is turned into this party's
// error, which the agreement step reports to every party (so all exit non-zero).
struct Prepared {
  std::unique_ptr<Dataset> data;
  FederationSettings settings;
  std::string error;
  std::string model_path;
  bool writes = false;
};

Prepared prepare(const TrainOptions& o, int rank) {
  Prepared p;
  try {
    p.settings.labels = LabelSet::parse_list(o.labels);
    p.settings.hyper = o.hyper.params();
    p.settings.dp = o.dp.params();
    p.settings.threads = o.common.threads;
    p.model_path = expand_rank(o.model, rank);
    p.writes = rank == 0 || o.model.find("{rank}") != std::string::npos;
    if (p.writes) {
      // Refuse up front (so no rank trains or writes) when the model cannot be written.
      const fs::path parent = fs::path(p.model_path).parent_path();
      const fs::path dir = parent.empty() ? fs::path(".") : parent;
      if (!fs::is_directory(dir))
        throw Error(fmt::format("cannot write the model to {}: {} is not a directory",
                                p.model_path, dir.string()));
      if (::access(dir.c_str(), W_OK) != 0)
        throw Error(fmt::format("cannot write the model to {}: {} is not writable",
                                p.model_path, dir.string()));
      if (fs::is_directory(p.model_path))
        throw Error(fmt::format("cannot write the model to {}: it is a directory", p.model_path));
    }
    const std::string path = expand_rank(o.data, rank);
    Dataset d = io::load_dataset(path, o.format.load_options());
    if (!d.has_labels) throw Error(fmt::format("{}: training data needs a label column", path));
    p.data = std::make_unique<Dataset>(std::move(d));
  } catch (const std::exception& e) {
    p.data.reset();
    p.error = e.what();
  }
  return p;
}

void run_federated_train(Communicator& comm, const TrainOptions& o, const std::string& transport) {
  const int rank = comm.rank();
  Prepared prep = prepare(o, rank);
  PartyInput input;
  input.data = prep.data.get();
  input.error = prep.error;
  // Progress only on a terminal and only for one rank: ranks share the terminal.
  std::unique_ptr<ProgressBar> bar;
  if (rank == 0) {
    bar = std::make_unique<ProgressBar>("local training", !o.common.quiet && !o.common.json);
    prep.settings.progress = bar->callback();
  }
  PartyResult result = train_party(comm, input, prep.settings);
  if (bar) bar->finish();
  std::string file;
  const std::vector<PartyReport> reports = compare_models(comm, result, file);

  std::string write_error;
  if (prep.writes) {
    try {
      io::write_file_atomic(prep.model_path, file);
    } catch (const std::exception& e) {
      write_error = e.what();
    }
  }
  agree_on_status(comm, write_error, "writing the model");
  if (rank != 0) return;

  const FlyConfig& c = result.model.config();
  const bool per_rank = o.model.find("{rank}") != std::string::npos;
  if (o.common.json) {
    print_json({{"command", "federated train"},
                {"parties", comm.size()},
                {"backend", transport},
                {"data", o.data},
                {"classes", result.model.labels().names()},
                {"config", config_json(c)},
                {"seed_drawn_by_party_0", result.seed_drawn},
                {"model", per_rank ? o.model : prep.model_path},
                {"model_per_rank", per_rank},
                {"model_bytes", file.size()},
                {"model_crc32", fmt::format("{:08x}", io::model_checksum(file))},
                {"identical_on_all_parties", true},
                {"parties_detail", reports_json(reports, {})},
                {"differential_privacy", privacy_json(result.privacy, prep.settings.dp)}});
    return;
  }
  std::cout << fmt::format("federated training: {} part{} over {}; seed {} ({})\n", comm.size(),
                           comm.size() == 1 ? "y" : "ies", transport, c.seed,
                           result.seed_drawn ? "drawn by party 0" : "given with --seed")
            << fmt::format("config: {}\n", c.describe());
  print_party_table(reports, {});
  print_privacy(result.privacy, prep.settings.dp);
  std::cout << (comm.size() == 1
                    ? fmt::format("a single party (no federation): model crc32 {:08x}, {}\n",
                                  io::model_checksum(file), human_bytes(file.size()))
                    : fmt::format("all {} parties hold the identical model (crc32 {:08x}, {})\n",
                                  comm.size(), io::model_checksum(file), human_bytes(file.size())))
            << fmt::format("model: {}\n",
                           per_rank ? fmt::format("{} (one copy per rank)", o.model)
                                    : fmt::format("{} (written by rank 0)", prep.model_path));
}

void train_command(const TrainOptions& o) {
  std::string backend = o.backend;
  if (backend == "auto") backend = launched_by_mpi_launcher() ? "mpi" : "solo";
  if (backend == "solo") {
    if (launched_by_mpi_launcher() && o.backend == "solo")
      std::fprintf(stderr, "flynn: warning: --backend solo under an MPI launcher: every rank "
                           "trains alone\n");
    ThreadColony colony(1);
    run_federated_train(colony.party(0), o, "solo (one party; start with mpirun for more)");
    return;
  }
  if (backend != "mpi") throw Error(fmt::format("--backend: '{}' is not one of auto, mpi, solo", backend));
#if FLYNN_HAVE_MPI
  bool failed = false;
  {
    MpiSession session;
    std::unique_ptr<Communicator> comm = session.world();
    try {
      run_federated_train(*comm, o, "MPI (" + MpiSession::library_version() + ")");
    } catch (const FederationError& e) {
      // Every rank raised the same error at the same point of the protocol. Each prints
      // it, then they meet once more before anyone exits: mpirun kills the remaining ranks
      // as soon as one exits non-zero, which would otherwise cut some messages.
      std::fprintf(stderr, "flynn: error: rank %d: %s\n", comm->rank(), e.what());
      std::fflush(stderr);
      failed = true;
      try {
        comm->allgather("");
      } catch (const std::exception&) {
      }
    } catch (const std::exception& e) {
      if (comm->size() > 1) {
        // A failure the protocol could not share: stop the other ranks rather than leave
        // them waiting in a collective.
        std::fprintf(stderr, "flynn: error: rank %d: %s (aborting every rank)\n", comm->rank(),
                     e.what());
        std::fflush(stderr);
        MpiSession::abort_all(1);
      }
      throw;
    }
  }  // MPI_Finalize
  if (failed) {
    std::fflush(stdout);
    std::exit(1);
  }
#else
  throw Error("this flynn was built without MPI: rebuild with libopenmpi-dev installed, or "
              "use 'flynn federated simulate' for parties on threads");
#endif
}

void add_federated_train(CLI::App& group) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = group.add_subcommand(
      "train",
      "Train one party of a federation (run under mpirun -np N: one party per rank); every "
      "rank ends with the identical model");
  cmd->add_option("--data", o->data,
                  "This party's shard; {rank} expands to the MPI rank (shard_{rank}.csv)")
      ->required();
  cmd->add_option("--labels", o->labels,
                  "The full label list L1,L2,... (every party must give the same)")
      ->required();
  cmd->add_option("--model", o->model,
                  "Output model: written by rank 0, or by every rank when it contains {rank}")
      ->required();
  cmd->add_option("--backend", o->backend,
                  "auto (MPI when started by mpirun, else a single party), mpi, solo");
  o->hyper.add_to(cmd);
  o->hyper.seed_opt->description(
      "Seed of the lifting matrix; every rank that gives it must give the same (default: "
      "rank 0 draws one and broadcasts it)");
  o->format.add_to(cmd);
  o->dp.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { train_command(*o); });
}

// ---- flynn federated simulate --------------------------------------------------------------------

struct SimulateOptions {
  std::string data, test, labels, split = "iid", model;
  int parties = 2;
  std::uint64_t split_seed = 0;
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
  DpOptions dp;
};

void simulate_command(const SimulateOptions& o) {
  const SplitSpec spec = SplitSpec::parse(o.split);
  if (o.parties < 1 || o.parties > 4096)
    throw Error(fmt::format("--parties {}: must be in [1, 4096]", o.parties));
  const io::LoadOptions load = o.format.load_options();
  Dataset all = io::load_dataset(o.data, load);
  if (!all.has_labels) throw Error(fmt::format("{}: training data needs a label column", o.data));
  all.require_trainable();
  const LabelSet labels = training_labels(o.labels, all);

  // Test rows: --test, or a stratified 20% hold-out (fold 0 of 5, seeded by --split-seed).
  Dataset train, test;
  std::string test_desc;
  if (!o.test.empty()) {
    io::LoadOptions tl = load;
    tl.expected_features = all.n_features;
    test = io::load_dataset(o.test, tl);
    if (!test.has_labels) throw Error(fmt::format("{}: test data needs labels", o.test));
    train = std::move(all);
    test_desc = o.test;
  } else {
    const auto folds = experiments::stratified_folds(all.labels, all.classes.size(), 5, o.split_seed);
    std::vector<std::size_t> tr, te;
    for (std::size_t r = 0; r < all.n_rows; ++r) (folds[r] == 0 ? te : tr).push_back(r);
    train = all.subset(tr);
    test = all.subset(te);
    test_desc = "stratified 20% hold-out of --data";
  }
  Dataset test_ids = test;
  test_ids.relabel(labels);  // names the file and line of a test label not in the list

  const auto split = split_rows(train.labels, train.classes.size(), o.parties, spec, o.split_seed);
  std::vector<Dataset> shards;
  for (const auto& rows : split) shards.push_back(train.subset(rows));
  std::vector<const Dataset*> ptrs;
  for (const Dataset& d : shards) ptrs.push_back(&d);

  FederationSettings settings;
  settings.hyper = o.hyper.params();
  // Simulations are experiments: reproducible by default, like `flynn train`.
  if (!settings.hyper.seed) settings.hyper.seed = Defaults::seed;
  settings.labels = labels;
  settings.dp = o.dp.params();
  settings.threads = std::max(1, resolve_threads(o.common.threads) / o.parties);

  const ColonyOutcome out = run_colony(ptrs, settings);
  PredictOptions po;
  po.threads = o.common.threads;
  const std::vector<std::uint32_t> predicted = out.model.predict(test_ids, po);
  const double acc = flynn::accuracy(test_ids.labels, predicted);
  const double bacc = balanced_accuracy(test_ids.labels, predicted, labels.size());
  if (!o.model.empty()) io::write_file_atomic(o.model, out.model_file);

  double aggregate_seconds = out.reports.front().timings.aggregate;
  for (const PartyReport& r : out.reports) aggregate_seconds = std::min(aggregate_seconds, r.timings.aggregate);
  double training_seconds = 0;
  for (const PartyReport& r : out.reports) training_seconds = std::max(training_seconds, r.timings.training);
  // Classes held by each party, to show what a non-IID split did.
  std::vector<std::size_t> classes_held;
  for (const Dataset& d : shards) {
    std::vector<bool> seen(d.classes.size(), false);
    for (std::uint32_t c : d.labels) seen[c] = true;
    classes_held.push_back(static_cast<std::size_t>(std::count(seen.begin(), seen.end(), true)));
  }

  if (o.common.json) {
    nlohmann::json parties = reports_json(out.reports, out.rows);
    for (std::size_t p = 0; p < parties.size(); ++p) parties[p]["classes_held"] = classes_held[p];
    print_json({{"command", "federated simulate"},
                {"data", o.data},
                {"test", test_desc},
                {"train_rows", train.n_rows},
                {"test_rows", test.n_rows},
                {"parties", o.parties},
                {"split", spec.describe()},
                {"split_seed", o.split_seed},
                {"threads_per_party", settings.threads},
                {"config", config_json(out.model.config())},
                {"accuracy", acc},
                {"balanced_accuracy", bacc},
                {"training_seconds", training_seconds},
                {"aggregation_seconds", aggregate_seconds},
                {"wall_seconds", out.wall_seconds},
                {"model_crc32", fmt::format("{:08x}", io::model_checksum(out.model_file))},
                {"identical_on_all_parties", true},
                {"parties_detail", parties},
                {"differential_privacy", privacy_json(out.privacy, settings.dp)}});
    return;
  }
  std::cout << fmt::format("simulated federation: {} parties on threads, split {} (seed {}), "
                           "{} training rows, {} worker thread(s) per party\n",
                           o.parties, spec.describe(), o.split_seed, train.n_rows, settings.threads)
            << fmt::format("config: {}\n", out.model.config().describe());
  print_party_table(out.reports, out.rows);
  std::cout << "classes held per party:";
  for (std::size_t h : classes_held) std::cout << " " << h;
  std::cout << "\n";
  print_privacy(out.privacy, settings.dp);
  std::cout << fmt::format("training {:.3f} s (slowest party), aggregation {:.4f} s, wall {:.3f} s; "
                           "all parties hold the identical model (crc32 {:08x})\n",
                           training_seconds, aggregate_seconds, out.wall_seconds,
                           io::model_checksum(out.model_file))
            << fmt::format("test ({}, {} rows): accuracy {:.4f}, balanced accuracy {:.4f}\n",
                           test_desc, test.n_rows, acc, bacc);
  if (!o.model.empty()) std::cout << fmt::format("model: {}\n", o.model);
}

void add_federated_simulate(CLI::App& group) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = group.add_subcommand(
      "simulate", "Simulate a federation: split a data set among parties that train on threads "
                  "(the same protocol as over MPI) and evaluate the aggregated model");
  cmd->add_option("--data", o->data, "Labelled data to split among the parties")->required();
  cmd->add_option("--parties", o->parties, "Number of parties tau (default 2)");
  cmd->add_option("--split", o->split,
                  "How rows are split: iid (default), by-class, dirichlet:ALPHA, sizes:W1,W2,...");
  cmd->add_option("--split-seed", o->split_seed, "Seed of the split and of the hold-out (default 0)");
  cmd->add_option("--test", o->test,
                  "Test data (default: a stratified 20% hold-out of --data, not trained on)");
  cmd->add_option("--labels", o->labels, "Label list L1,L2,... (default: sorted labels of --data)");
  cmd->add_option("--model", o->model, "Also write the aggregated model here");
  o->hyper.add_to(cmd);
  o->format.add_to(cmd);
  o->dp.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { simulate_command(*o); });
}

void add_federated_commands(CLI::App& app) {
  CLI::App* group = command_group(
      app, "federated",
      "Federated FlyNN (FlyNNFL): parties train on their own rows, one all-reduce of the "
      "counts, optional differential privacy");
  add_federated_train(*group);
  add_federated_simulate(*group);
}

const RegisterCommand registered(60, add_federated_commands);

}  // namespace

}  // namespace flynn::cli
