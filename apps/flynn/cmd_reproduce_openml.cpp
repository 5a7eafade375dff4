// flynn reproduce openml: the paper's OpenML study (Table 2, Figure 1) on the datasets of a
// MANIFEST.tsv directory, every method on the same folds, resumable.
#include <algorithm>
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
#include "flynn/experiments/manifest.hpp"
#include "flynn/experiments/report.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::cli {

namespace {

namespace fs = std::filesystem;
using reproduce::StudyTask;

struct OpenmlOptions {
  std::string data_dir;
  std::string datasets;
  reproduce::ProtocolOptions protocol;
  std::string out = "reproduce-openml";
  bool quick = false;
  double max_work = 0;
  double tie_tolerance = experiments::kDefaultTieTolerance;
  bool no_plots = false;
  CommonOptions common;
  CLI::Option* datasets_opt = nullptr;
};

// --quick without --datasets: the three cheapest datasets plus the cheapest one with three
// or more classes, so that CI exercises multi-class scoring too.
std::vector<experiments::ManifestEntry> quick_subset(const std::vector<experiments::ManifestEntry>& all) {
  std::vector<experiments::ManifestEntry> sorted;
  for (const auto& e : all)
    if (!e.path.empty()) sorted.push_back(e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return reproduce::study_cost(a.rows, a.features()) < reproduce::study_cost(b.rows, b.features());
  });
  std::vector<experiments::ManifestEntry> pick(sorted.begin(), sorted.begin() + std::min<std::size_t>(3, sorted.size()));
  const bool has_multi = std::any_of(pick.begin(), pick.end(), [](const auto& e) { return e.classes >= 3; });
  if (!has_multi)
    for (std::size_t i = pick.size(); i < sorted.size(); ++i)
      if (sorted[i].classes >= 3) {
        pick.push_back(sorted[i]);
        break;
      }
  return pick;
}

void run_openml(OpenmlOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const experiments::Manifest manifest = experiments::read_manifest(o.data_dir);
  std::vector<experiments::ManifestEntry> entries = experiments::select_entries(manifest, o.datasets);
  if (o.quick && !o.datasets_opt->count()) entries = quick_subset(entries);

  experiments::StudyOptions so = o.protocol.study_options(o.quick);
  if (o.max_work > 0) so.search.guard.max_work = o.max_work;

  // Datasets without a file are reported and skipped, never fatal.
  std::vector<std::pair<std::string, std::string>> failures;
  std::vector<StudyTask> tasks;
  for (const auto& e : entries) {
    if (e.path.empty()) {
      failures.emplace_back(e.id(), fmt::format("no data file {}/{}.csv.gz", o.data_dir, e.id()));
      continue;
    }
    StudyTask t;
    t.id = e.id();
    t.cost = reproduce::study_cost(e.rows, e.features());
    const std::string path = e.path;
    const std::size_t rows = e.rows, columns = e.columns;
    t.load = [path, rows, columns]() {
      io::LoadOptions lo;
      lo.format = io::Format::Csv;
      lo.header = io::LoadOptions::Header::Yes;
      Dataset d = io::load_dataset(path, lo);
      if (d.n_rows != rows || d.n_features + 1 != columns)
        throw Error(fmt::format("{}: {} rows × {} columns, the manifest says {} × {}", path, d.n_rows,
                                d.n_features + 1, rows, columns));
      return d;
    };
    tasks.push_back(std::move(t));
  }
  if (tasks.empty()) throw Error(fmt::format("no dataset of {} has a data file", manifest.file));

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int jobs = o.protocol.jobs;
  reproduce::StudyBatch batch = reproduce::run_study_batch(tasks, so, o.out, jobs, o.common, "datasets");
  failures.insert(failures.end(), batch.failures.begin(), batch.failures.end());
  const std::vector<experiments::DatasetStudy>& studies = batch.studies;
  const double compute = batch.compute_seconds;
  const int per_job = batch.threads_per_job;
  if (studies.empty()) throw Error(fmt::format("every dataset failed (first: {}: {})", failures.front().first,
                                               failures.front().second));
  // Reports list datasets in manifest order whatever order they finished in.
  const std::vector<experiments::Comparison> table2 = experiments::study_table2(studies, o.tie_tolerance);
  const fs::path out(o.out);
  experiments::write_per_dataset_csv((out / "per_dataset.csv").string(), studies);
  experiments::write_table2_csv((out / "table2.csv").string(), table2);

  experiments::ReportContext ctx;
  ctx.command = reproduce::command_line("flynn reproduce openml");
  ctx.data_dir = o.data_dir;
  ctx.jobs = jobs;
  ctx.threads_per_job = per_job;
  ctx.cores = cores;
  ctx.blas = experiments::blas_description();
  ctx.failures = failures;
  ctx.tie_tolerance = o.tie_tolerance;
  ctx.options = so;
  ctx.quick = o.quick;
  ctx.compute_seconds = compute;
  if (!o.no_plots) {
    try {
      ctx.figures = experiments::plot_figure1(o.out, studies);
    } catch (const std::exception& e) {
      ctx.figure_error = e.what();
      if (!o.common.quiet) std::fprintf(stderr, "flynn: warning: no figures: %s\n", e.what());
    }
  } else {
    ctx.figure_error = "--no-plots";
  }
  ctx.wall_seconds = seconds_since(start);
  ctx.cpu_seconds = reproduce::process_cpu_seconds();
  const std::string report = experiments::openml_report_markdown(studies, table2, ctx);
  io::write_file_atomic((out / "report.md").string(), report);

  nlohmann::json all = nlohmann::json::array();
  for (const auto& s : studies) all.push_back(experiments::to_json(s));
  const nlohmann::json summary = {{"command", "reproduce openml"},
                                  {"data_dir", o.data_dir},
                                  {"out", o.out},
                                  {"quick", o.quick},
                                  {"datasets", studies.size()},
                                  {"failures", reproduce::failures_json(failures)},
                                  {"table2", reproduce::table2_json(table2)},
                                  {"tie_tolerance", o.tie_tolerance},
                                  {"wall_seconds", ctx.wall_seconds},
                                  {"cpu_seconds", ctx.cpu_seconds},
                                  {"compute_seconds", compute},
                                  {"jobs", jobs},
                                  {"threads_per_job", per_job},
                                  {"settings", so.fingerprint()},
                                  {"figures", ctx.figures}};
  nlohmann::json results = summary;
  results["studies"] = all;
  io::write_file_atomic((out / "results.json").string(), results.dump(1) + "\n");

  if (o.common.json) {
    print_json(summary);
    return;
  }
  std::cout << fmt::format("{} datasets ({} failed or skipped) in {}; results in {}/\n", studies.size(),
                           failures.size(), reproduce::format_duration(ctx.wall_seconds), o.out);
  std::cout << "FlyNN vs   n   frac.better  W/T/L     median impr.  t-test p  Wilcoxon p\n";
  for (const auto& c : table2)
    std::cout << fmt::format("{:<8} {:>3}   {:>6.2f}     {:>2}/{}/{:<4}  {:>8.2f}%   {:>8}  {:>8}\n", c.baseline,
                             c.n_datasets, c.frac_better, c.wins, c.ties, c.losses,
                             100 * c.median_improvement, experiments::format_pvalue(c.ttest_p),
                             experiments::format_pvalue(c.wilcoxon_p));
}

void add_reproduce_openml(CLI::App& app) {
  CLI::App* group = command_group(app, "reproduce", "Reproduce the paper's experiments");
  auto o = std::make_shared<OpenmlOptions>();
  CLI::App* cmd = group->add_subcommand(
      "openml", "OpenML study: FlyNN vs kNNC, 1NNC, SBFC, LR, MLP on every dataset of a manifest "
                "(Table 2, Figure 1); resumable");
  cmd->add_option("--data-dir", o->data_dir, "Folder with MANIFEST.tsv and <did>_<name>.csv.gz files")
      ->required();
  o->datasets_opt = cmd->add_option("--datasets", o->datasets,
                                    "Comma-separated subset (did, name or did_name); default: all");
  o->protocol.add_to(cmd, "Seed of folds, search design and baselines (default 0)");
  cmd->add_option("--out", o->out, "Output folder (default reproduce-openml); reruns resume from it");
  cmd->add_flag("--quick", o->quick,
                "Small subset (3-4 cheapest datasets), budget 12, 5 folds: a smoke test in a few minutes");
  cmd->add_option("--max-work", o->max_work,
                  "Guard: hashing additions n*m*s per FlyNN evaluation (default 1e11)");
  cmd->add_option("--tie-tolerance", o->tie_tolerance,
                  "Accuracy differences up to this count as ties (default 1e-6)");
  cmd->add_flag("--no-plots", o->no_plots, "Skip the Figure-1 PNGs");
  o->common.add_to(cmd);
  cmd->callback([o] { run_openml(*o); });
}

const RegisterCommand registered(70, add_reproduce_openml);

}  // namespace

}  // namespace flynn::cli
