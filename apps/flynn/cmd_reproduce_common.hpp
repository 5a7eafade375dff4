#pragma once
// Shared machinery of `flynn reproduce openml` and `flynn reproduce synthetic`: running a
// list of dataset studies on N concurrent jobs, persisting each result atomically under
// OUT/datasets/ (so an interrupted run resumes where it stopped), and progress lines with
// an ETA on stderr.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "flynn/dataset.hpp"
#include "flynn/eval/study.hpp"

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
  eval::DatasetStudy study;  ///< ok == false when loading or the study itself failed
  bool resumed = false;      ///< read back from a previous run (same settings)
};

/// Runs every task not already finished with the same settings: tasks whose
/// out_dir/datasets/<id>.json holds an ok result with settings == options.fingerprint()
/// are read back; the others run (largest estimated cost first, `jobs` at a time, each on
/// threads/jobs threads) and are written back atomically as soon as each finishes, failed
/// ones included (they are retried by the next run). Progress lines on stderr: one per
/// finished dataset with its main accuracies, time, elapsed time and ETA.
std::vector<TaskOutcome> run_study_tasks(const std::vector<StudyTask>& tasks,
                                         const eval::StudyOptions& options, const RunnerOptions& ro);

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
