#pragma once
// Running a list of dataset studies (openml, synthetic) as one resumable batch: N
// concurrent jobs, each result saved under OUT/datasets/<id>.json as soon as it finishes
// (the Checkpoint mechanism), progress lines with an ETA through a callback.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/dataset.hpp"
#include "flynn/harness/statistics.hpp"
#include "flynn/harness/study.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// A line of progress from a study runner (no trailing newline). Runners call it from one
/// thread at a time.
using StudyLog = std::function<void(const std::string&)>;

/// One dataset of a study.
struct StudyTask {
  std::string id;                 ///< result key and file name: OUT/datasets/<id>.json
  double cost = 1.0;              ///< relative cost estimate (for scheduling and the ETA)
  std::function<Dataset()> load;  ///< reads or generates the data; may throw flynn::Error
};

/// Relative cost of a study on n rows × d features: the FlyNN search and SBFC grow as
/// n·d², the kNN searches as n²·d.
double study_cost(std::size_t n, std::size_t d);

/// How to run a batch of dataset studies.
struct StudyBatchOptions {
  std::string out_dir;            ///< results go to out_dir/datasets/
  int jobs = 1;                   ///< datasets processed concurrently
  int threads = 0;                ///< total threads (0 = all cores), split evenly over the jobs
  std::string what = "datasets";  ///< noun for progress lines
  StudyLog log;                   ///< progress lines (none when empty)
};

/// What a finished batch of dataset studies gives a report.
struct StudyBatch {
  std::vector<DatasetStudy> studies;                          ///< the ok ones, in task order
  std::vector<std::pair<std::string, std::string>> failures;  ///< (dataset, reason)
  double compute_seconds = 0.0;  ///< per-dataset wall time, resumed datasets included
  int threads_per_job = 1;       ///< threads each job ran on
};

/// Creates out_dir, limits BLAS threads to each job's share and runs every task not
/// already finished with the same settings (an ok result in out_dir/datasets/<id>.json
/// whose settings equal options.fingerprint() is read back; failed ones are retried).
/// A task whose loading or study throws flynn::Error is saved and reported as a failure,
/// never stopping the batch. Progress: one line per finished dataset with its main
/// accuracies, time, elapsed time and ETA.
StudyBatch run_study_batch(const std::vector<StudyTask>& tasks, const StudyOptions& options,
                           const StudyBatchOptions& batch);

/// table2.csv's rows as JSON.
nlohmann::json table2_json(const std::vector<Comparison>& table2);

/// [{"dataset", "error"}, …].
nlohmann::json failures_json(const std::vector<std::pair<std::string, std::string>>& failures);

/// Threads per job for `threads` total threads (0 = all cores) over `jobs` jobs.
int threads_per_job(int threads, int jobs);

/// Limits OpenBLAS's own threads (used by FAISS and SBFC) to `threads`, when the BLAS in
/// use is OpenBLAS; concurrent jobs would otherwise each spawn one thread per core.
void limit_blas_threads(int threads);

/// "1h02m", "3m05s", "12s".
std::string format_duration(double seconds);

/// The command line of this process (from /proc/self/cmdline, arguments joined with
/// spaces, the program reduced to "flynn"), for reports; `fallback` when unreadable.
std::string command_line(const std::string& fallback);

}  // namespace flynn::harness
