#pragma once
// Shared machinery of `flynn reproduce openml` and `flynn reproduce synthetic`: running a
// list of dataset studies on N concurrent jobs, persisting each result atomically under
// OUT/datasets/ (so an interrupted run resumes where it stopped), and progress lines with
// an ETA on stderr.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "flynn/dataset.hpp"
#include "flynn/experiments/statistics.hpp"
#include "flynn/experiments/study.hpp"

namespace flynn::cli::reproduce {

/// One dataset of a study.
struct StudyTask {
  std::string id;                        ///< result key and file name: OUT/datasets/<id>.json
  double cost = 1.0;                     ///< relative cost estimate (for scheduling and the ETA)
  std::function<Dataset()> load;         ///< reads or generates the data; may throw flynn::Error
};

/// Relative cost of a study on n rows × d features: the FlyNN search and SBFC grow as
/// n·d², the kNN searches as n²·d.
double study_cost(std::size_t n, std::size_t d);

struct RunnerOptions {
  std::string out_dir;   ///< results go to out_dir/datasets/
  int jobs = 1;          ///< datasets processed concurrently
  int threads = 0;       ///< total threads (0 = all cores), split evenly over the jobs
  bool quiet = false;    ///< no progress lines
  std::string what = "datasets";  ///< noun for progress lines
};

/// The outcome of one task, in task order.
struct TaskOutcome {
  experiments::DatasetStudy study;  ///< ok == false when loading or the study itself failed
  bool resumed = false;      ///< read back from a previous run (same settings)
};

/// Runs every task not already finished with the same settings: tasks whose
/// out_dir/datasets/<id>.json holds an ok result with settings == options.fingerprint()
/// are read back; the others run (largest estimated cost first, `jobs` at a time, each on
/// threads/jobs threads) and are written back atomically as soon as each finishes, failed
/// ones included (they are retried by the next run). Progress lines on stderr: one per
/// finished dataset with its main accuracies, time, elapsed time and ETA.
std::vector<TaskOutcome> run_study_tasks(const std::vector<StudyTask>& tasks,
                                         const experiments::StudyOptions& options, const RunnerOptions& ro);

/// The protocol flags of a dataset study: --budget, --folds, --jobs, --search, --m-scale,
/// --seed.
struct ProtocolOptions {
  std::uint32_t budget = 60;
  std::uint32_t folds = 10;
  int jobs = 1;
  std::uint64_t seed = 0;
  std::string design = "halving";
  std::string m_scale = "linear";
  CLI::Option *budget_opt = nullptr, *folds_opt = nullptr;
  void add_to(CLI::App* cmd, const std::string& seed_help);
  /// Study settings from the flags; `quick` lowers budget and folds (unless given) and the
  /// SBFC and search work guards, for smoke runs.
  experiments::StudyOptions study_options(bool quick) const;
};

/// What a finished batch of dataset studies gives a report.
struct StudyBatch {
  std::vector<experiments::DatasetStudy> studies;                    ///< the ok ones, in task order
  std::vector<std::pair<std::string, std::string>> failures;  ///< (dataset, reason)
  double compute_seconds = 0.0;  ///< per-dataset wall time, resumed datasets included
  int threads_per_job = 1;
};

/// Creates out_dir, limits BLAS threads to each job's share and runs the tasks
/// (run_study_tasks); splits the outcomes into studies and failures.
StudyBatch run_study_batch(const std::vector<StudyTask>& tasks, const experiments::StudyOptions& options,
                           const std::string& out_dir, int jobs, const CommonOptions& common,
                           const std::string& what);

/// table2.csv's rows as JSON.
nlohmann::json table2_json(const std::vector<experiments::Comparison>& table2);

/// [{"dataset", "error"}, …].
nlohmann::json failures_json(const std::vector<std::pair<std::string, std::string>>& failures);

/// Threads per job for `threads` total threads (0 = all cores) over `jobs` jobs.
int threads_per_job(int threads, int jobs);

/// Limits OpenBLAS's own threads (used by FAISS and SBFC) to `threads`, when the BLAS in
/// use is OpenBLAS; concurrent jobs would otherwise each spawn one thread per core.
void limit_blas_threads(int threads);

/// User + system CPU seconds of this process so far.
double process_cpu_seconds();

/// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

/// The command line of this process (from /proc/self/cmdline, arguments joined with
/// spaces, the program reduced to "flynn"), for reports; `fallback` when unreadable.
std::string command_line(const std::string& fallback);

}  // namespace flynn::cli::reproduce
