#include "flynn/harness/synthetic_study_runner.hpp"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "flynn/io/atomic_file.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/baselines/knn.hpp"
#include "flynn/harness/report.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace fs = std::filesystem;

namespace {

// The report's setup section: data, protocol, machine, time, failures.
std::string setup_markdown(const SyntheticStudyOptions& o, const StudyBatch& batch, double wall, double cpu,
                           const std::vector<DatasetStudy>& studies) {
  std::string setup;
  if (o.quick)
    setup += "> **Quick run** (`--quick`): 3 datasets of the d = 50, n = 1000 configurations, budget 12, "
             "5 folds. Not the study's numbers.\n\n";
  setup += fmt::format("Command: `{}`\n\n", command_line(o.command));
  setup += fmt::format(
      "- Data: Guyon's generator as scikit-learn's make_classification (5 classes, 3 clusters per "
      "class, class_sep 1.2, every feature informative, 1% label noise as sklearn's default flip_y); "
      "binary variant: make_classification in d/10 dimensions, FlyHashed to d bits with b = d/10 "
      "ones (as the reference code). {} datasets per configuration, seed {}.\n",
      o.per_config, o.seed);
  setup += fmt::format("- Protocol: stratified {}-fold CV shared by every method; FlyNN `{}` search with "
                       "budget {}; kNNC k ∈ {{1,…,64}}; SBFC m/d grid; LR/MLP one epoch.\n",
                       o.study.folds, search_design_name(o.study.search.design), o.study.search.budget);
  setup += fmt::format("- Machine: {} cores, {} job(s) × {} thread(s); BLAS: {}.\n", usable_cores(), o.jobs,
                       batch.threads_per_job, blas_description());
  setup += fmt::format("- Time: {:.0f} s wall and {:.0f} s CPU (user + system) for this invocation, {:.0f} s "
                       "of per-dataset wall time (resumed datasets included).\n",
                       wall, cpu, batch.compute_seconds);
  std::vector<std::string> method_failures;
  for (const auto& st : studies)
    for (const auto& m : st.methods)
      if (!m.ok) method_failures.push_back(fmt::format("  - {} / {}: {}", st.dataset, m.method, m.error));
  if (!method_failures.empty()) {
    setup += fmt::format("- {} method failure(s) (the other methods of those datasets still count):\n",
                         method_failures.size());
    for (const auto& line : method_failures) setup += line + "\n";
  }
  if (!batch.failures.empty()) {
    setup += fmt::format("- {} dataset(s) failed:\n", batch.failures.size());
    for (const auto& [id, why] : batch.failures) setup += fmt::format("  - {}: {}\n", id, why);
  }
  return setup;
}

}  // namespace

SyntheticStudyResult run_synthetic_study(const SyntheticStudyOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (!o.dense && !o.binary) throw Error("synthetic study: select the dense variant, the binary one or both");
  if (o.per_config == 0) throw Error("synthetic study: needs at least 1 dataset per configuration");
  const std::vector<SyntheticConfig> all = paper_synthetic_configs();
  std::vector<SyntheticConfig> configs;
  std::vector<std::size_t> config_index;  // index into the paper grid: keeps data seeds stable
  for (std::size_t i = 0; i < all.size(); ++i) {
    if ((all[i].binary && !o.binary) || (!all[i].binary && !o.dense)) continue;
    if (o.quick && (all[i].n != 1000 || all[i].d != 50)) continue;
    configs.push_back(all[i]);
    config_index.push_back(i);
  }

  std::vector<StudyTask> tasks;
  for (std::size_t c = 0; c < configs.size(); ++c)
    for (std::size_t rep = 0; rep < o.per_config; ++rep) {
      StudyTask t;
      t.id = synthetic_dataset_id(configs[c], rep);
      t.cost = study_cost(configs[c].n, configs[c].d);
      const SyntheticConfig cfg = configs[c];
      const std::size_t ci = config_index[c];
      const std::uint64_t seed = o.seed;
      t.load = [cfg, ci, rep, seed]() { return make_synthetic(cfg, ci, rep, seed); };
      tasks.push_back(std::move(t));
    }

  StudyBatchOptions bo;
  bo.out_dir = o.out;
  bo.jobs = o.jobs;
  bo.threads = o.threads;
  bo.what = "synthetic datasets";
  bo.log = o.log;
  const StudyBatch batch = run_study_batch(tasks, o.study, bo);
  const auto& studies = batch.studies;
  if (studies.empty())
    throw Error(fmt::format("every synthetic dataset failed (first: {})", batch.failures.front().second));
  SyntheticStudyResult result;
  result.cells = synthetic_table1(configs, studies);
  const auto table2 = study_table2(studies);
  const fs::path out(o.out);
  write_per_dataset_csv((out / "per_dataset.csv").string(), studies);
  write_table2_csv((out / "table2.csv").string(), table2);
  write_table1_csv((out / "table1.csv").string(), configs, result.cells);

  result.wall_seconds = detail::seconds_since(start);
  const double cpu = cpu_seconds();
  io::write_file_atomic((out / "report.md").string(),
                        synthetic_report_markdown(configs, result.cells, table2,
                                                  setup_markdown(o, batch, result.wall_seconds, cpu, studies)));

  nlohmann::json jcells = nlohmann::json::array();
  for (const auto& c : result.cells)
    jcells.push_back({{"config", c.config},
                      {"method", c.method},
                      {"n_datasets", c.normalized.n},
                      {"mean_normalized_accuracy", c.normalized.mean},
                      {"se", c.normalized.se},
                      {"mean_accuracy", c.accuracy.mean}});
  result.summary = {{"command", "reproduce synthetic"},
                    {"out", o.out},
                    {"quick", o.quick},
                    {"datasets", studies.size()},
                    {"failures", failures_json(batch.failures)},
                    {"table1", jcells},
                    {"table2", table2_json(table2)},
                    {"wall_seconds", result.wall_seconds},
                    {"cpu_seconds", cpu},
                    {"compute_seconds", batch.compute_seconds},
                    {"settings", o.study.fingerprint()}};
  nlohmann::json results = result.summary;
  nlohmann::json jstudies = nlohmann::json::array();
  for (const auto& s : studies) jstudies.push_back(to_json(s));
  results["studies"] = jstudies;
  io::write_file_atomic((out / "results.json").string(), results.dump(1) + "\n");
  result.datasets = studies.size();
  result.failures = batch.failures.size();
  return result;
}

}  // namespace flynn::harness
