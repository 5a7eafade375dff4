#include "cmd_reproduce_common.hpp"

#include <dlfcn.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flynn/error.hpp"
#include "flynn/detail/atomic_file.hpp"
#include "flynn/detail/parallel.hpp"

namespace flynn::cli::reproduce {

namespace fs = std::filesystem;

namespace {

std::string result_path(const std::string& out_dir, const std::string& id) {
  return (fs::path(out_dir) / "datasets" / (id + ".json")).string();
}

// A previous result for this task, if it finished with the same settings.
bool try_resume(const std::string& path, const nlohmann::json& fingerprint, experiments::DatasetStudy& out) {
  std::ifstream in(path);
  if (!in) return false;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    experiments::DatasetStudy s = experiments::study_from_json(j);
    if (!s.ok || s.settings != fingerprint) return false;
    out = std::move(s);
    return true;
  } catch (const std::exception&) {
    return false;  // unreadable or from another version: recompute
  }
}

std::string summary(const experiments::DatasetStudy& s) {
  if (!s.ok) return "FAILED: " + s.error;
  std::string line;
  for (const char* m : {"FlyNN", "kNNC", "SBFC"}) {
    if (const experiments::MethodOutcome* o = s.find(m)) line += fmt::format("{} {:.4f}  ", m, o->accuracy);
  }
  if (const experiments::MethodOutcome* f = s.find("FlyNN"); f && f->details.contains("capped") &&
                                                     f->details["capped"].get<std::size_t>() > 0)
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

int threads_per_job(int threads, int jobs) {
  return std::max(1, resolve_threads(threads) / std::max(1, jobs));
}

void limit_blas_threads(int threads) {
  using SetThreads = void (*)(int);
  if (auto fn = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    fn(std::max(1, threads));
}

double process_cpu_seconds() {
  rusage u{};
  if (::getrusage(RUSAGE_SELF, &u) != 0) return 0.0;
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
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
    out += " " + (plain ? args[i] : "'" + args[i] + "'");
  }
  return out;
}

std::vector<TaskOutcome> run_study_tasks(const std::vector<StudyTask>& tasks,
                                         const experiments::StudyOptions& options, const RunnerOptions& ro) {
  fs::create_directories(fs::path(ro.out_dir) / "datasets");
  const nlohmann::json fingerprint = options.fingerprint();
  std::vector<TaskOutcome> out(tasks.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    if (try_resume(result_path(ro.out_dir, tasks[i].id), fingerprint, out[i].study)) {
      out[i].resumed = true;
    } else {
      todo.push_back(i);
    }
  }
  const std::size_t resumed = tasks.size() - todo.size();
  if (!ro.quiet && resumed > 0)
    std::fprintf(stderr, "flynn: %zu of %zu %s already done in %s/datasets (same settings): skipped\n",
                 resumed, tasks.size(), ro.what.c_str(), ro.out_dir.c_str());
  // Longest first: with concurrent jobs the last dataset to start is then a short one.
  std::stable_sort(todo.begin(), todo.end(),
                   [&](std::size_t a, std::size_t b) { return tasks[a].cost > tasks[b].cost; });
  double total_cost = 0.0;
  for (std::size_t i : todo) total_cost += tasks[i].cost;

  experiments::StudyOptions per_job = options;
  per_job.threads = threads_per_job(ro.threads, ro.jobs);
  const int jobs = std::max(1, std::min<int>(ro.jobs, static_cast<int>(std::max<std::size_t>(1, todo.size()))));
  const auto start = std::chrono::steady_clock::now();
  std::mutex mutex;
  double done_cost = 0.0;
  std::size_t done = 0;
  if (!ro.quiet && !todo.empty())
    std::fprintf(stderr, "flynn: %zu %s to run on %d job(s) × %d thread(s)\n", todo.size(),
                 ro.what.c_str(), jobs, per_job.threads);

  parallel_for(todo.size(), jobs, [&](std::size_t t, int) {
    const std::size_t i = todo[t];
    const StudyTask& task = tasks[i];
    experiments::DatasetStudy st;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const Dataset data = task.load();
      if (!ro.quiet) {
        // Large datasets take minutes: say what each job is working on.
        std::lock_guard<std::mutex> lock(mutex);
        std::fprintf(stderr, "flynn: started %s (%zu rows × %zu features, %zu classes)\n", task.id.c_str(),
                     data.n_rows, data.n_features, data.classes.size());
      }
      st = experiments::run_dataset_study(data, task.id, per_job);
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      // Reported and skipped: a bad dataset never stops the study.
      st = experiments::DatasetStudy();
      st.dataset = task.id;
      st.ok = false;
      st.error = e.what();
      st.settings = fingerprint;
      st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    try {
      io::write_file_atomic(result_path(ro.out_dir, task.id), experiments::to_json(st).dump(1) + "\n");
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mutex);
      std::fprintf(stderr, "flynn: warning: cannot save %s: %s\n", task.id.c_str(), e.what());
    }
    std::lock_guard<std::mutex> lock(mutex);
    ++done;
    done_cost += task.cost;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double eta = done_cost > 0 ? elapsed * (total_cost - done_cost) / done_cost : 0.0;
    if (!ro.quiet) {
      std::fprintf(stderr, "[%*zu/%zu] %s: %s(%.1f s, %.1f s CPU) | elapsed %s, ETA %s\n",
                   static_cast<int>(std::to_string(todo.size()).size()), done, todo.size(),
                   task.id.c_str(), summary(st).c_str(), st.seconds, st.cpu_seconds,
                   format_duration(elapsed).c_str(),
                   done == todo.size() ? "0s" : format_duration(eta).c_str());
      std::fflush(stderr);
    }
    out[i].study = std::move(st);
  });
  return out;
}

void ProtocolOptions::add_to(CLI::App* cmd, const std::string& seed_help) {
  budget_opt = cmd->add_option("--budget", budget, "FlyNN search evaluations per dataset (default 60)")
                   ->check(CLI::Range(1u, 100000u));
  folds_opt = cmd->add_option("--folds", folds, "Stratified CV folds (default 10)")->check(CLI::Range(2u, 1000u));
  cmd->add_option("--jobs", jobs, "Datasets processed concurrently (default 1)")->check(CLI::Range(1, 1024));
  cmd->add_option("--search", design,
                  "FlyNN search design: halving (default: Halton + successive halving), halton, random");
  cmd->add_option("--m-scale", m_scale, "FlyNN search: m/d uniform (linear, default) or log-uniform (log)");
  cmd->add_option("--seed", seed, seed_help);
}

experiments::StudyOptions ProtocolOptions::study_options(bool quick) const {
  experiments::StudyOptions so;
  so.folds = folds;
  so.fold_seed = seed;
  so.search.budget = budget;
  so.search.design = experiments::parse_search_design(design);
  so.search.space.m_scale = experiments::parse_m_scale(m_scale);
  so.search.seed = seed;
  so.sbfc.seed = seed;
  so.sgd.seed = seed;
  if (quick) {
    // Small but complete: every method, every output, a few minutes at most on 2 cores.
    if (!budget_opt->count()) so.search.budget = 12;
    if (!folds_opt->count()) so.folds = 5;
    so.sbfc.max_work = 2e10;
    so.search.guard.max_work = 2e10;
  }
  return so;
}

StudyBatch run_study_batch(const std::vector<StudyTask>& tasks, const experiments::StudyOptions& options,
                           const std::string& out_dir, int jobs, const CommonOptions& common,
                           const std::string& what) {
  fs::create_directories(out_dir);
  StudyBatch batch;
  batch.threads_per_job = threads_per_job(common.threads, jobs);
  limit_blas_threads(batch.threads_per_job);
  RunnerOptions ro;
  ro.out_dir = out_dir;
  ro.jobs = jobs;
  ro.threads = common.threads;
  ro.quiet = common.quiet;
  ro.what = what;
  for (const auto& t : run_study_tasks(tasks, options, ro)) {
    batch.compute_seconds += t.study.seconds;
    if (t.study.ok) {
      batch.studies.push_back(t.study);
    } else {
      batch.failures.emplace_back(t.study.dataset, t.study.error);
    }
  }
  return batch;
}

nlohmann::json table2_json(const std::vector<experiments::Comparison>& table2) {
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
                    {"wilcoxon_method", c.wilcoxon_method == experiments::WilcoxonMethod::Exact ? "exact" : "normal"}});
  return rows;
}

nlohmann::json failures_json(const std::vector<std::pair<std::string, std::string>>& failures) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [dataset, why] : failures) rows.push_back({{"dataset", dataset}, {"error", why}});
  return rows;
}

}  // namespace flynn::cli::reproduce
