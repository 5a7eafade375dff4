#include "flynn/harness/openml_study_runner.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "flynn/io/atomic_file.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/baselines/knn.hpp"
#include "flynn/harness/manifest.hpp"
#include "flynn/harness/report.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace fs = std::filesystem;

namespace {

// --quick without --datasets: the three cheapest datasets plus the cheapest one with three
// or more classes, so that CI exercises multi-class scoring too.
std::vector<ManifestEntry> quick_subset(const std::vector<ManifestEntry>& all) {
  std::vector<ManifestEntry> sorted;
  for (const auto& e : all)
    if (!e.path.empty()) sorted.push_back(e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return study_cost(a.rows, a.features()) < study_cost(b.rows, b.features());
  });
  std::vector<ManifestEntry> pick(sorted.begin(), sorted.begin() + std::min<std::size_t>(3, sorted.size()));
  const bool has_multi = std::any_of(pick.begin(), pick.end(), [](const auto& e) { return e.classes >= 3; });
  if (!has_multi)
    for (std::size_t i = pick.size(); i < sorted.size(); ++i)
      if (sorted[i].classes >= 3) {
        pick.push_back(sorted[i]);
        break;
      }
  return pick;
}

// A dataset's load step: the CSV, checked against the manifest's shape.
StudyTask task_for(const ManifestEntry& e) {
  StudyTask t;
  t.id = e.id();
  t.cost = study_cost(e.rows, e.features());
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
  return t;
}

}  // namespace

OpenmlStudyResult run_openml_study(const OpenmlStudyOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  const Manifest manifest = read_manifest(o.data_dir);
  std::vector<ManifestEntry> entries = select_entries(manifest, o.datasets);
  if (o.quick && o.datasets.empty()) entries = quick_subset(entries);

  // Datasets without a file are reported and skipped, never fatal.
  std::vector<std::pair<std::string, std::string>> failures;
  std::vector<StudyTask> tasks;
  for (const auto& e : entries) {
    if (e.path.empty()) {
      failures.emplace_back(e.id(), fmt::format("no data file {}/{}.csv.gz", o.data_dir, e.id()));
      continue;
    }
    tasks.push_back(task_for(e));
  }
  if (tasks.empty()) throw Error(fmt::format("no dataset of {} has a data file", manifest.file));

  StudyBatchOptions bo;
  bo.out_dir = o.out;
  bo.jobs = o.jobs;
  bo.threads = o.threads;
  bo.log = o.log;
  const StudyBatch batch = run_study_batch(tasks, o.study, bo);
  failures.insert(failures.end(), batch.failures.begin(), batch.failures.end());
  const std::vector<DatasetStudy>& studies = batch.studies;
  if (studies.empty())
    throw Error(fmt::format("every dataset failed (first: {}: {})", failures.front().first, failures.front().second));
  // Reports list datasets in manifest order whatever order they finished in.
  OpenmlStudyResult result;
  result.table2 = study_table2(studies, o.tie_tolerance);
  const fs::path out(o.out);
  write_per_dataset_csv((out / "per_dataset.csv").string(), studies);
  write_table2_csv((out / "table2.csv").string(), result.table2);

  ReportContext ctx;
  ctx.command = command_line(o.command);
  ctx.data_dir = o.data_dir;
  ctx.jobs = o.jobs;
  ctx.threads_per_job = batch.threads_per_job;
  ctx.cores = usable_cores();
  ctx.blas = blas_description();
  ctx.failures = failures;
  ctx.tie_tolerance = o.tie_tolerance;
  ctx.options = o.study;
  ctx.quick = o.quick;
  ctx.compute_seconds = batch.compute_seconds;
  if (o.plots) {
    try {
      ctx.figures = plot_figure1(o.out, studies);
    } catch (const std::exception& e) {
      ctx.figure_error = e.what();
      if (o.log) o.log(fmt::format("flynn: warning: no figures: {}", e.what()));
    }
  } else {
    ctx.figure_error = "--no-plots";
  }
  ctx.wall_seconds = detail::seconds_since(start);
  ctx.cpu_seconds = cpu_seconds();
  io::write_file_atomic((out / "report.md").string(), openml_report_markdown(studies, result.table2, ctx));

  nlohmann::json all = nlohmann::json::array();
  for (const auto& s : studies) all.push_back(to_json(s));
  result.summary = {{"command", "reproduce openml"},
                    {"data_dir", o.data_dir},
                    {"out", o.out},
                    {"quick", o.quick},
                    {"datasets", studies.size()},
                    {"failures", failures_json(failures)},
                    {"table2", table2_json(result.table2)},
                    {"tie_tolerance", o.tie_tolerance},
                    {"wall_seconds", ctx.wall_seconds},
                    {"cpu_seconds", ctx.cpu_seconds},
                    {"compute_seconds", batch.compute_seconds},
                    {"jobs", o.jobs},
                    {"threads_per_job", batch.threads_per_job},
                    {"settings", o.study.fingerprint()},
                    {"figures", ctx.figures}};
  nlohmann::json results = result.summary;
  results["studies"] = all;
  io::write_file_atomic((out / "results.json").string(), results.dump(1) + "\n");
  result.datasets = studies.size();
  result.failures = failures.size();
  result.wall_seconds = ctx.wall_seconds;
  return result;
}

}  // namespace flynn::harness
