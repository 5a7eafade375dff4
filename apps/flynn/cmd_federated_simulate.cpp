// flynn federated simulate: a federation on threads (the protocol MPI parties run), any
// split, evaluated on held-out rows (experiments::simulate_federation).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/error.hpp"
#include "flynn/eval/federated_report.hpp"
#include "flynn/eval/federated_simulation.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"

namespace flynn::cli {

namespace {

using namespace flynn::federated;

struct SimulateOptions {
  std::string data, test, labels, split = "iid", model;
  int parties = 2;
  std::uint64_t split_seed = 0;
  PartyOptions party;
};

void simulate_command(const SimulateOptions& o) {
  experiments::SimulationSpec spec;
  spec.split = SplitSpec::parse(o.split);
  if (o.parties < 1 || o.parties > 4096) throw Error(fmt::format("--parties {}: must be in [1, 4096]", o.parties));
  spec.parties = o.parties;
  spec.split_seed = o.split_seed;
  const PartyFiles files = o.party.files(o.data, "");
  spec.settings.dp = o.party.dp.params();
  // With --schema the table (categories, d) is the public one, as every party would read it.
  if (!files.schema.empty()) spec.settings.schema = load_public_schema(files.schema, files.max_input_bytes);
  Dataset all = load_party_rows(o.data, files.load, spec.settings.schema, files.schema, spec.settings.dp.has_value());
  all.require_trainable();
  spec.settings.labels = training_labels(o.labels, all);
  const experiments::SimulationData data = experiments::simulation_data(std::move(all), o.test, files.load, o.split_seed);
  spec.settings.hyper = o.party.hyper.params();
  // Simulations are experiments: reproducible by default, like `flynn train`.
  if (!spec.settings.hyper.seed) spec.settings.hyper.seed = Defaults::seed;
  spec.settings.missing = files.load.missing;
  spec.settings.feature_stats = o.party.feature_stats.load(files.max_input_bytes);
  spec.settings.threads = std::max(1, resolve_threads(o.party.common.threads) / o.parties);
  spec.predict_threads = o.party.common.threads;

  const experiments::SimulationResult r = experiments::simulate_federation(data.train, data.test, spec);
  if (!o.model.empty()) io::write_file_atomic(o.model, r.outcome.model_file);
  const std::uint64_t train_rows = data.train.n_rows, test_rows = data.test.n_rows;
  if (o.party.common.json) {
    nlohmann::json j = experiments::simulation_json(r, spec, train_rows, test_rows, data.test_description);
    j.update({{"command", "federated simulate"}, {"data", o.data}});
    print_json(j);
    return;
  }
  std::cout << experiments::simulation_text(r, spec, train_rows, test_rows, data.test_description);
  if (!o.model.empty()) std::cout << fmt::format("model: {}\n", o.model);
}

void add_federated_simulate(CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = federated_group(app)->add_subcommand(
      "simulate", "Simulate a federation: split a data set among parties that train on threads (the same "
                  "protocol as over MPI) and evaluate the aggregated model");
  cmd->add_option("--data", o->data, "Labelled data to split among the parties")->required();
  cmd->add_option("--parties", o->parties, "Number of parties tau (default 2)");
  cmd->add_option("--split", o->split, "How rows are split: iid (default), by-class, dirichlet:ALPHA, sizes:W1,W2,...");
  cmd->add_option("--split-seed", o->split_seed, "Seed of the split and of the hold-out (default 0)");
  cmd->add_option("--test", o->test, "Test data (default: a stratified 20% hold-out of --data, not trained on)");
  cmd->add_option("--labels", o->labels, "Label list L1,L2,... (default: sorted labels of --data)");
  cmd->add_option("--model", o->model, "Also write the aggregated model here");
  o->party.add_to(cmd);
  cmd->callback([o] { simulate_command(*o); });
}

const RegisterCommand registered(61, add_federated_simulate);

}  // namespace

}  // namespace flynn::cli
