// flynn federated simulate: a federation on threads (the protocol MPI parties run), any
// split, evaluated on held-out rows (experiments::simulate_federation).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/error.hpp"
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
  CommonOptions common;
  HyperParamOptions hyper;
  DataOptions format;
  DpOptions dp;
  FeatureStatsOption feature_stats;
  SchemaOption schema;
};

void simulate_command(const SimulateOptions& o) {
  experiments::SimulationSpec spec;
  spec.split = SplitSpec::parse(o.split);
  if (o.parties < 1 || o.parties > 4096) throw Error(fmt::format("--parties {}: must be in [1, 4096]", o.parties));
  spec.parties = o.parties;
  spec.split_seed = o.split_seed;
  // Missing cells stay NaN until the federation's means are known (party.hpp step 1c).
  const io::LoadOptions load = o.format.party_load_options();
  spec.settings.dp = o.dp.params();
  // With --schema the table (categories, d) is the public one, as every party would read it.
  spec.settings.schema = o.schema.load(o.format.max_input_bytes());
  Dataset all = load_party_rows(o.data, load, spec.settings.schema, o.schema, spec.settings.dp.has_value());
  all.require_trainable();
  spec.settings.labels = training_labels(o.labels, all);

  // Test rows: --test, or a stratified 20% hold-out (fold 0 of 5, seeded by --split-seed).
  Dataset train, test;
  std::string test_desc;
  if (!o.test.empty()) {
    io::LoadOptions tl = load;
    tl.expected_features = all.n_features;
    tl.schema = &all.schema;  // the training table's columns and categories
    test = io::load_dataset(o.test, tl);
    if (!test.has_labels) throw Error(fmt::format("{}: test data needs labels", o.test));
    train = std::move(all);
    test_desc = o.test;
  } else {
    std::tie(train, test) = experiments::stratified_holdout(all, o.split_seed);
    test_desc = "stratified 20% hold-out of --data";
  }
  spec.settings.hyper = o.hyper.params();
  // Simulations are experiments: reproducible by default, like `flynn train`.
  if (!spec.settings.hyper.seed) spec.settings.hyper.seed = Defaults::seed;
  spec.settings.missing = load.missing;
  spec.settings.feature_stats = o.feature_stats.load(o.format.max_input_bytes());
  spec.settings.threads = std::max(1, resolve_threads(o.common.threads) / o.parties);
  spec.predict_threads = o.common.threads;

  const experiments::SimulationResult r = experiments::simulate_federation(train, test, spec);
  const ColonyOutcome& out = r.outcome;
  if (!o.model.empty()) io::write_file_atomic(o.model, out.model_file);
  if (o.common.json) {
    nlohmann::json parties = experiments::party_reports_json(out.reports, out.rows);
    for (std::size_t p = 0; p < parties.size(); ++p) parties[p]["classes_held"] = r.classes_held[p];
    print_json({{"command", "federated simulate"},
                {"data", o.data},
                {"test", test_desc},
                {"train_rows", train.n_rows},
                {"test_rows", test.n_rows},
                {"parties", o.parties},
                {"split", spec.split.describe()},
                {"split_seed", o.split_seed},
                {"threads_per_party", spec.settings.threads},
                {"config", config_json(out.model.config())},
                {"accuracy", r.accuracy},
                {"balanced_accuracy", r.balanced_accuracy},
                {"training_seconds", r.training_seconds},
                {"aggregation_seconds", r.aggregate_seconds},
                {"wall_seconds", out.wall_seconds},
                {"model_crc32", fmt::format("{:08x}", io::model_checksum(out.model_file))},
                {"identical_on_all_parties", true},
                {"parties_detail", parties},
                {"differential_privacy", experiments::privacy_account_json(out.privacy, spec.settings.dp)}});
    return;
  }
  std::cout << fmt::format("simulated federation: {} parties on threads, split {} (seed {}), "
                           "{} training rows, {} worker thread(s) per party\n",
                           o.parties, spec.split.describe(), o.split_seed, train.n_rows, spec.settings.threads)
            << fmt::format("config: {}\n", out.model.config().describe());
  print_party_table(out.reports, out.rows);
  std::cout << "classes held per party:";
  for (std::size_t h : r.classes_held) std::cout << " " << h;
  std::cout << "\n";
  print_privacy(out.privacy, spec.settings.dp);
  std::cout << fmt::format("training {:.3f} s (slowest party), aggregation {:.4f} s, wall {:.3f} s; "
                           "all parties hold the identical model (crc32 {:08x})\n",
                           r.training_seconds, r.aggregate_seconds, out.wall_seconds,
                           io::model_checksum(out.model_file))
            << fmt::format("test ({}, {} rows): accuracy {:.4f}, balanced accuracy {:.4f}\n", test_desc, test.n_rows,
                           r.accuracy, r.balanced_accuracy);
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
  o->feature_stats.add_to(cmd);
  o->schema.add_to(cmd);
  o->dp.add_to(cmd);
  o->common.add_to(cmd);
  cmd->callback([o] { simulate_command(*o); });
}

void add_federated_simulate_command(CLI::App& app) { add_federated_simulate(*federated_group(app)); }

const RegisterCommand registered(61, add_federated_simulate_command);

}  // namespace

}  // namespace flynn::cli
