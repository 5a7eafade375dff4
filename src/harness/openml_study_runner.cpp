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

using Failures = std::vector<std::pair<std::string, std::string>>;

// The manifest's datasets to study (a quick subset with --quick); those without a file are
// reported in `failures` and skipped, never fatal.
std::vector<StudyTask> study_tasks(const OpenmlStudyOptions& o, Failures& failures) {
  const Manifest manifest = read_manifest(o.data_dir);
  std::vector<ManifestEntry> entries = select_entries(manifest, o.datasets);
  if (o.quick && o.datasets.empty()) entries = quick_subset(entries);
  std::vector<StudyTask> tasks;
  for (const auto& e : entries) {
    if (e.path.empty()) {
      failures.emplace_back(e.id(), fmt::format("no data file {}/{}.csv.gz", o.data_dir, e.id()));
      continue;
    }
    tasks.push_back(task_for(e));
  }
  if (tasks.empty()) throw Error(fmt::format("no dataset of {} has a data file", manifest.file));
  return tasks;
}

// What the report says of the run besides the studies, with its figures drawn.
ReportContext report_context(const OpenmlStudyOptions& o, const StudyBatch& batch, const Failures& failures) {
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
  if (!o.plots) {
    ctx.figure_error = "--no-plots";
    return ctx;
  }
  try {
    ctx.figures = plot_figure1(o.out, batch.studies);
  } catch (const std::exception& e) {
    ctx.figure_error = e.what();
    if (o.log) o.log(fmt::format("flynn: warning: no figures: {}", e.what()));
  }
  return ctx;
}

nlohmann::json summary_json(const OpenmlStudyOptions& o, const StudyBatch& batch, const Failures& failures,
                            const std::vector<Comparison>& table2, const ReportContext& ctx) {
  return {{"command", "reproduce openml"},
          {"data_dir", o.data_dir},
          {"out", o.out},
          {"quick", o.quick},
          {"datasets", batch.studies.size()},
          {"failures", failures_json(failures)},
          {"table2", table2_json(table2)},
          {"tie_tolerance", o.tie_tolerance},
          {"wall_seconds", ctx.wall_seconds},
          {"cpu_seconds", ctx.cpu_seconds},
          {"compute_seconds", batch.compute_seconds},
          {"jobs", o.jobs},
          {"threads_per_job", batch.threads_per_job},
          {"settings", o.study.fingerprint()},
          {"figures", ctx.figures}};
}

}  // namespace

OpenmlStudyResult run_openml_study(const OpenmlStudyOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  Failures failures;
  const std::vector<StudyTask> tasks = study_tasks(o, failures);
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

  ReportContext ctx = report_context(o, batch, failures);
  ctx.wall_seconds = detail::seconds_since(start);
  ctx.cpu_seconds = cpu_seconds();
  io::write_file_atomic((out / "report.md").string(), openml_report_markdown(studies, result.table2, ctx));

  result.summary = summary_json(o, batch, failures, result.table2, ctx);
  nlohmann::json results = result.summary;
  results["studies"] = nlohmann::json::array();
  for (const auto& s : studies) results["studies"].push_back(to_json(s));
  io::write_file_atomic((out / "results.json").string(), results.dump(1) + "\n");
  result.datasets = studies.size();
  result.failures = failures.size();
  result.wall_seconds = ctx.wall_seconds;
  return result;
}

}  // namespace flynn::harness
