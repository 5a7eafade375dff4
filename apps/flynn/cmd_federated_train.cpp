// flynn federated train: one party of a federation, for real over MPI (one party per
// rank) or alone; every rank ends with the identical model (federated::run_party_from_files).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "flynn/build_config.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/federated_report.hpp"
#include "flynn/eval/federated_simulation.hpp"
#include "flynn/federated/mpi.hpp"
#include "flynn/federated/simulate.hpp"

namespace flynn::cli {

namespace {

using namespace flynn::federated;

struct TrainOptions {
  std::string data, labels, model, test, backend = "auto";
  PartyOptions party;
};

void run_federated_train(Communicator& comm, const TrainOptions& o, const std::string& transport) {
  const int rank = comm.rank();
  const bool per_rank = o.model.find("{rank}") != std::string::npos;
  const std::string model = expand_rank(o.model, rank);
  // A flag that does not parse is this party's error, which the agreement step reports to
  // every party (so all exit non-zero).
  FederationSettings settings;
  PartyFiles files;
  std::string error;
  try {
    settings.labels = LabelSet::parse_list(o.labels);
    settings.hyper = o.party.hyper.params();
    settings.dp = o.party.dp.params();
    settings.threads = o.party.common.threads;
    files = o.party.files(expand_rank(o.data, rank), rank == 0 || per_rank ? model : "");
    files.test = expand_rank(o.test, rank);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Progress only on a terminal and only for one rank: ranks share the terminal.
  std::unique_ptr<ProgressBar> bar;
  if (rank == 0) {
    bar = std::make_unique<ProgressBar>("local training", !o.party.common.quiet && !o.party.common.json);
    settings.progress = bar->callback();
  }
  const PartyRun run = run_party_from_files(comm, files, settings, error);
  if (bar) bar->finish();
  // Each party's own check of a DP release on its rows: printed where it ran, never sent.
  if (!run.result.release_warning.empty())
    std::fprintf(stderr, "flynn: party %d: %s", rank, run.result.release_warning.c_str());
  if (rank != 0) return;
  const eval::TrainedParty p{comm.size(), transport, o.data, o.model, model, per_rank, settings.dp};
  if (!o.party.common.json) {
    std::cout << eval::trained_party_text(run, p);
    return;
  }
  nlohmann::json j = eval::trained_party_json(run, p);
  j["command"] = "federated train";
  print_json(j);
}

void train_command(const TrainOptions& o) {
  std::string backend = o.backend;
  if (backend == "auto") backend = launched_by_mpi_launcher() ? "mpi" : "solo";
  if (backend == "solo") {
    if (launched_by_mpi_launcher() && o.backend == "solo")
      std::fprintf(stderr, "flynn: warning: --backend solo under an MPI launcher: every rank trains alone\n");
    ThreadColony colony(1);
    run_federated_train(colony.party(0), o, "solo (one party; start with mpirun for more)");
    return;
  }
  if (backend != "mpi") throw Error(fmt::format("--backend: '{}' is not one of auto, mpi, solo", backend));
#if FLYNN_HAVE_MPI
  const bool ok = run_on_mpi_world([&](Communicator& comm) {
    run_federated_train(comm, o, "MPI (" + MpiRuntime::library_version() + ")");
  });
  if (!ok) {
    std::fflush(stdout);
    std::exit(1);
  }
#else
  throw Error("this flynn was built without MPI: rebuild with libopenmpi-dev installed, or "
              "use 'flynn federated simulate' for parties on threads");
#endif
}

void add_federated_train(CLI::App& app) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "train",
      "Train one party of a federation (run under mpirun -np N: one party per rank); every rank ends with the "
      "identical model");
  cmd->add_option("--data", o->data, "This party's shard; {rank} expands to the MPI rank (shard_{rank}.csv)")
      ->required();
  cmd->add_option("--labels", o->labels, "The full label list L1,L2,... (every party must give the same)")
      ->required();
  cmd->add_option("--model", o->model, "Output model: written by rank 0, or by every rank when it contains {rank}")
      ->required();
  cmd->add_option("--test", o->test,
                  "This party's held-out rows (labelled; {rank} expands): after training, the parties sum their "
                  "confusion matrices (federated evaluation) and learn the federation's accuracy, not each other's");
  cmd->add_option("--backend", o->backend, "auto (MPI when started by mpirun, else a single party), mpi, solo");
  o->party.add_to(cmd);
  o->party.hyper.option("seed")->description(
      "Seed of the lifting matrix; every rank that gives it must give the same (default: rank 0 draws one and "
      "broadcasts it)");
  cmd->callback([o] { train_command(*o); });
}

const RegisterCommand registered(60, add_federated_train);

}  // namespace

}  // namespace flynn::cli
