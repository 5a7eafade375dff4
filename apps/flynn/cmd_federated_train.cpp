// flynn federated train: one party of a federation, for real over MPI (one party per
// rank) or alone; every rank ends with the identical model.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "flynn/build_config.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/federated_simulation.hpp"
#include "flynn/federated/mpi.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/simulate.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"

namespace flynn::cli {

namespace {

namespace fs = std::filesystem;
using namespace flynn::federated;

struct TrainOptions {
  std::string data, labels, model, backend = "auto";
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
  DpOptions dp;
  FeatureStatsOption feature_stats;
  SchemaOption schema;
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
    const io::LoadOptions load = o.format.party_load_options();
    p.settings.missing = load.missing;
    p.settings.feature_stats = o.feature_stats.load(o.format.max_input_bytes());
    p.settings.schema = o.schema.load(o.format.max_input_bytes());
    p.data = std::make_unique<Dataset>(
        load_party_rows(path, load, p.settings.schema, o.schema, p.settings.dp.has_value()));
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
                {"parties_detail", experiments::party_reports_json(reports, {})},
                {"differential_privacy", experiments::privacy_account_json(result.privacy, prep.settings.dp)}});
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
      print_local_detail(e, fmt::format("flynn: rank {}", comm->rank()).c_str());
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
  o->hyper.option("seed")->description(
      "Seed of the lifting matrix; every rank that gives it must give the same (default: "
      "rank 0 draws one and broadcasts it)");
  o->format.add_to(cmd);
  o->feature_stats.add_to(cmd);
  o->schema.add_to(cmd);
  o->dp.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { train_command(*o); });
}

void add_federated_train_command(CLI::App& app) { add_federated_train(*federated_group(app)); }

const RegisterCommand registered(60, add_federated_train_command);

}  // namespace

}  // namespace flynn::cli
