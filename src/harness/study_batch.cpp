#include "flynn/harness/study_batch.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/parallel.hpp"
#include "flynn/error.hpp"
#include "flynn/harness/checkpoint.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace fs = std::filesystem;

namespace {

std::string summary(const DatasetStudy& s) {
  if (!s.ok) return "FAILED: " + s.error;
  std::string line;
  for (const char* m : {"FlyNN", "kNNC", "SBFC"}) {
    if (const MethodOutcome* o = s.find(m)) line += fmt::format("{} {:.4f}  ", m, o->accuracy);
  }
  if (const MethodOutcome* f = s.find("FlyNN");
      f && f->details.contains("capped") && f->details["capped"].get<std::size_t>() > 0)
    line += fmt::format("(guard capped m in {} FlyNN evaluations)  ", f->details["capped"].get<std::size_t>());
  std::size_t failed = 0;
  for (const auto& m : s.methods) failed += !m.ok;
  if (failed) line += fmt::format("({} method(s) failed)  ", failed);
  return line;
}

}  // namespace

double study_cost(std::size_t n, std::size_t d) {
  const double N = static_cast<double>(n), D = static_cast<double>(d);
  return N * D * (D + 16.0) + N * N * D / 200.0 + 1e5;
}

int threads_per_job(int threads, int jobs) { return std::max(1, detail::resolve_threads(threads) / std::max(1, jobs)); }

void limit_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  if (auto fn = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    fn(std::max(1, threads));
}

std::string format_duration(double s) {
  if (!(s >= 0.0) || !std::isfinite(s)) return "?";
  const long t = std::lround(s);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

std::string command_line(const std::string& fallback) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (raw.empty()) return fallback;
  std::vector<std::string> args;
  std::string cur;
  for (char c : raw) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.empty()) return fallback;
  std::string out = "flynn";
  for (std::size_t i = 1; i < args.size(); ++i) {
    const bool plain = args[i].find_first_of(" \t'\"$") == std::string::npos && !args[i].empty();
    // Appended piece by piece: GCC 12's -Wrestrict misfires on "'" + std::string&&.
    out += ' ';
    if (!plain) out += '\'';
    out += args[i];
    if (!plain) out += '\'';
  }
  return out;
}

StudyBatch run_study_batch(const std::vector<StudyTask>& tasks, const StudyOptions& options,
                           const StudyBatchOptions& bo) {
  fs::create_directories(fs::path(bo.out_dir) / "datasets");
  StudyBatch batch;
  batch.threads_per_job = threads_per_job(bo.threads, bo.jobs);
  limit_blas_threads(batch.threads_per_job);
  const nlohmann::json fingerprint = options.fingerprint();
  const Checkpoint checkpoint((fs::path(bo.out_dir) / "datasets").string(), fingerprint);

  std::vector<BatchUnit> units;
  for (const StudyTask& t : tasks) units.push_back({t.id, t.cost});
  std::mutex log_mutex;
  auto log = [&](const std::string& line) {
    if (!bo.log) return;
    std::lock_guard<std::mutex> lock(log_mutex);
    bo.log(line);
  };
  StudyOptions per_job = options;
  per_job.threads = batch.threads_per_job;
  BatchOptions run;
  run.jobs = bo.jobs;
  run.accept = [](const nlohmann::json& j) { return j.value("ok", false); };  // failures are retried
  run.on_start = [&](const BatchProgress& p) {
    if (p.resumed > 0)
      log(fmt::format("flynn: {} of {} {} already done in {}/datasets (same settings): skipped", p.resumed,
                      tasks.size(), bo.what, bo.out_dir));
    const int jobs = std::max(1, std::min<int>(bo.jobs, static_cast<int>(std::max<std::size_t>(1, p.todo))));
    if (p.todo > 0)
      log(fmt::format("flynn: {} {} to run on {} job(s) × {} thread(s)", p.todo, bo.what, jobs,
                      batch.threads_per_job));
  };
  run.on_finished = [&](std::size_t i, const nlohmann::json& result, const BatchProgress& p) {
    const DatasetStudy st = study_from_json(result);
    log(fmt::format("[{:>{}}/{}] {}: {}({:.1f} s, {:.1f} s CPU) | elapsed {}, ETA {}", p.done,
                    std::to_string(p.todo).size(), p.todo, tasks[i].id, summary(st), st.seconds, st.cpu_seconds,
                    format_duration(p.elapsed_seconds), format_duration(p.eta_seconds)));
  };
  const BatchOutcome outcome = run_checkpointed(checkpoint, units, [&](std::size_t i) {
    const StudyTask& task = tasks[i];
    DatasetStudy st;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const Dataset data = task.load();
      // Large datasets take minutes: say what each job is working on.
      log(fmt::format("flynn: started {} ({} rows × {} features, {} classes)", task.id, data.n_rows,
                      data.n_features, data.classes.size()));
      st = run_dataset_study(data, task.id, per_job);
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      // Reported and skipped: a bad dataset never stops the study.
      st = DatasetStudy();
      st.dataset = task.id;
      st.ok = false;
      st.error = e.what();
      st.settings = fingerprint;
      st.seconds = detail::seconds_since(t0);
    }
    return to_json(st);
  }, run);

  for (const nlohmann::json& j : outcome.results) {
    const DatasetStudy st = study_from_json(j);
    batch.compute_seconds += st.seconds;
    if (st.ok) {
      batch.studies.push_back(st);
    } else {
      batch.failures.emplace_back(st.dataset, st.error);
    }
  }
  return batch;
}

nlohmann::json table2_json(const std::vector<Comparison>& table2) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : table2)
    rows.push_back({{"baseline", c.baseline},
                    {"n_datasets", c.n_datasets},
                    {"frac_better", c.frac_better},
                    {"wins", c.wins},
                    {"ties", c.ties},
                    {"losses", c.losses},
                    {"median_improvement", c.median_improvement},
                    {"ttest_p", c.ttest_p},
                    {"wilcoxon_p", c.wilcoxon_p},
                    {"wilcoxon_method", c.wilcoxon_method == WilcoxonMethod::Exact ? "exact" : "normal"}});
  return rows;
}

nlohmann::json failures_json(const std::vector<std::pair<std::string, std::string>>& failures) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [dataset, why] : failures) rows.push_back({{"dataset", dataset}, {"error", why}});
  return rows;
}

}  // namespace flynn::harness
