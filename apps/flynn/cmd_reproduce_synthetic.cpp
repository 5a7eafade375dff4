// flynn reproduce synthetic: the paper's synthetic study (Table 1, and the binary-data
// Table 3 analogue): generated datasets, every method on the same folds, normalised
// accuracy mean ± standard error per configuration; resumable.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cmd_reproduce_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/experiments/knn.hpp"
#include "flynn/experiments/report.hpp"
#include "flynn/experiments/synthetic_study.hpp"
#include "flynn/detail/atomic_file.hpp"

namespace flynn::cli {

namespace {

namespace fs = std::filesystem;

struct SyntheticOptions {
  std::string out = "reproduce-synthetic";
  bool quick = false;
  std::size_t per_config = 30;
  reproduce::ProtocolOptions protocol;
  std::string variants = "dense,binary";
  CommonOptions common;
  CLI::Option* per_config_opt = nullptr;
};

void run_synthetic(const SyntheticOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const bool want_dense = o.variants.find("dense") != std::string::npos;
  const bool want_binary = o.variants.find("binary") != std::string::npos;
  if (!want_dense && !want_binary)
    throw Error(fmt::format("--variants '{}': give dense, binary or both", o.variants));
  std::vector<experiments::SyntheticConfig> all = experiments::paper_synthetic_configs(), configs;
  std::vector<std::size_t> config_index;  // index into the paper grid: keeps data seeds stable
  for (std::size_t i = 0; i < all.size(); ++i) {
    if ((all[i].binary && !want_binary) || (!all[i].binary && !want_dense)) continue;
    if (o.quick && all[i].n != 1000) continue;  // quick: only the n = 10^3 configurations
    if (o.quick && all[i].d != 50) continue;
    configs.push_back(all[i]);
    config_index.push_back(i);
  }
  std::size_t per_config = o.per_config;
  const experiments::StudyOptions so = o.protocol.study_options(o.quick);
  if (o.quick && !o.per_config_opt->count()) per_config = 3;
  if (per_config == 0) throw Error("--datasets-per-config must be at least 1");

  std::vector<reproduce::StudyTask> tasks;
  for (std::size_t c = 0; c < configs.size(); ++c)
    for (std::size_t rep = 0; rep < per_config; ++rep) {
      reproduce::StudyTask t;
      t.id = experiments::synthetic_dataset_id(configs[c], rep);
      t.cost = reproduce::study_cost(configs[c].n, configs[c].d);
      const experiments::SyntheticConfig cfg = configs[c];
      const std::size_t ci = config_index[c];
      const std::uint64_t seed = o.protocol.seed;
      t.load = [cfg, ci, rep, seed]() { return experiments::make_synthetic(cfg, ci, rep, seed); };
      tasks.push_back(std::move(t));
    }

  const reproduce::StudyBatch batch =
      reproduce::run_study_batch(tasks, so, o.out, o.protocol.jobs, o.common, "synthetic datasets");
  const auto& studies = batch.studies;
  const auto& failures = batch.failures;
  const double compute = batch.compute_seconds;
  if (studies.empty())
    throw Error(fmt::format("every synthetic dataset failed (first: {})", failures.front().second));
  const auto cells = experiments::synthetic_table1(configs, studies);
  const auto table2 = experiments::study_table2(studies);
  const fs::path out(o.out);
  experiments::write_per_dataset_csv((out / "per_dataset.csv").string(), studies);
  experiments::write_table2_csv((out / "table2.csv").string(), table2);
  experiments::write_table1_csv((out / "table1.csv").string(), configs, cells);

  const double wall = seconds_since(start);
  std::string setup;
  if (o.quick)
    setup += "> **Quick run** (`--quick`): 3 datasets of the d = 50, n = 1000 configurations, budget 12, "
             "5 folds. Not the study's numbers.\n\n";
  setup += fmt::format("Command: `{}`\n\n", reproduce::command_line("flynn reproduce synthetic"));
  setup += fmt::format(
      "- Data: Guyon's generator as scikit-learn's make_classification (5 classes, 3 clusters per "
      "class, class_sep 1.2, every feature informative, 1% label noise as sklearn's default flip_y); "
      "binary variant: make_classification in d/10 dimensions, FlyHashed to d bits with b = d/10 "
      "ones (as the reference code). {} datasets per configuration, seed {}.\n",
      per_config, o.protocol.seed);
  setup += fmt::format("- Protocol: stratified {}-fold CV shared by every method; FlyNN `{}` search with "
                       "budget {}; kNNC k ∈ {{1,…,64}}; SBFC m/d grid; LR/MLP one epoch.\n",
                       so.folds, search_design_name(so.search.design), so.search.budget);
  setup += fmt::format("- Machine: {} cores, {} job(s) × {} thread(s); BLAS: {}.\n",
                       std::max(1u, std::thread::hardware_concurrency()), o.protocol.jobs, batch.threads_per_job,
                       experiments::blas_description());
  const double cpu = reproduce::process_cpu_seconds();
  setup += fmt::format("- Time: {:.0f} s wall and {:.0f} s CPU (user + system) for this invocation, {:.0f} s "
                       "of per-dataset wall time (resumed datasets included).\n",
                       wall, cpu, compute);
  std::vector<std::string> method_failures;
  for (const auto& st : studies)
    for (const auto& m : st.methods)
      if (!m.ok) method_failures.push_back(fmt::format("  - {} / {}: {}", st.dataset, m.method, m.error));
  if (!method_failures.empty()) {
    setup += fmt::format("- {} method failure(s) (the other methods of those datasets still count):\n",
                         method_failures.size());
    for (const auto& line : method_failures) setup += line + "\n";
  }
  if (!failures.empty()) {
    setup += fmt::format("- {} dataset(s) failed:\n", failures.size());
    for (const auto& [id, why] : failures) setup += fmt::format("  - {}: {}\n", id, why);
  }
  io::write_file_atomic((out / "report.md").string(),
                        experiments::synthetic_report_markdown(configs, cells, table2, setup));

  nlohmann::json jcells = nlohmann::json::array();
  for (const auto& c : cells)
    jcells.push_back({{"config", c.config},
                      {"method", c.method},
                      {"n_datasets", c.normalized.n},
                      {"mean_normalized_accuracy", c.normalized.mean},
                      {"se", c.normalized.se},
                      {"mean_accuracy", c.accuracy.mean}});
  const nlohmann::json summary = {{"command", "reproduce synthetic"}, {"out", o.out},
                                  {"quick", o.quick},                 {"datasets", studies.size()},
                                  {"failures", reproduce::failures_json(failures)},                {"table1", jcells},
                                  {"table2", reproduce::table2_json(table2)},                    {"wall_seconds", wall}, {"cpu_seconds", cpu},
                                  {"compute_seconds", compute},       {"settings", so.fingerprint()}};
  nlohmann::json results = summary;
  nlohmann::json jstudies = nlohmann::json::array();
  for (const auto& s : studies) jstudies.push_back(experiments::to_json(s));
  results["studies"] = jstudies;
  io::write_file_atomic((out / "results.json").string(), results.dump(1) + "\n");
  if (o.common.json) {
    print_json(summary);
    return;
  }
  std::cout << fmt::format("{} synthetic datasets ({} failed) in {}; results in {}/\n", studies.size(),
                           failures.size(), reproduce::format_duration(wall), o.out);
  for (const auto& c : cells)
    std::cout << fmt::format("{:<34} {:<6} {:+.3f} ± {:.3f}  (n = {})\n", c.label, c.method,
                             c.normalized.mean, c.normalized.se, c.normalized.n);
}

void add_reproduce_synthetic(CLI::App& app) {
  CLI::App* group = command_group(app, "reproduce", "Reproduce the paper's experiments");
  auto o = std::make_shared<SyntheticOptions>();
  CLI::App* cmd = group->add_subcommand(
      "synthetic", "Synthetic study: Table 1 (dense) and Table 3 (binary) analogues, normalised "
                   "accuracy mean ± standard error per configuration; resumable");
  cmd->add_option("--out", o->out, "Output folder (default reproduce-synthetic); reruns resume from it");
  cmd->add_flag("--quick", o->quick, "3 datasets of the d=50, n=1000 configurations, budget 12, 5 folds");
  o->per_config_opt = cmd->add_option("--datasets-per-config", o->per_config,
                                      "Generated datasets per configuration (default 30)");
  o->protocol.add_to(cmd, "Seed of the data, folds, search and baselines (default 0)");
  cmd->add_option("--variants", o->variants, "dense, binary or dense,binary (default both)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_synthetic(*o); });
}

const RegisterCommand registered(71, add_reproduce_synthetic);

}  // namespace

}  // namespace flynn::cli
