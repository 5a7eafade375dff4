#pragma once
// The synthetic study (paper Table 1 and the binary-data Table 3 analogue) as one
// resumable run: generated datasets, every method on the same folds, table1.csv,
// table2.csv, per_dataset.csv, report.md and results.json. `flynn reproduce synthetic`
// parses its flags into SyntheticStudyOptions and prints the result.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/harness/study.hpp"
#include "flynn/harness/study_batch.hpp"
#include "flynn/harness/synthetic_study.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// What to run and where.
struct SyntheticStudyOptions {
  std::string out = "reproduce-synthetic";  ///< output folder; reruns resume from it
  bool dense = true;                ///< the dense configurations (Table 1)
  bool binary = true;               ///< the binary configurations (Table 3 analogue)
  /// Only the d = 50, n = 1000 configurations. (The lower budget and folds are in `study`,
  /// the smaller dataset count in `per_config`.)
  bool quick = false;
  std::size_t per_config = 30;      ///< generated datasets per configuration (≥ 1)
  std::uint64_t seed = 0;           ///< seed of the generated data
  int jobs = 1;                     ///< datasets processed concurrently
  int threads = 0;                  ///< total threads (0 = all cores)
  StudyOptions study;               ///< protocol: folds, search, baselines, seeds
  std::string command = "flynn reproduce synthetic";  ///< for the report, when /proc is unreadable
  StudyLog log;                     ///< progress lines (none when empty)
};

/// What the study found (everything is also on disk under `out`).
struct SyntheticStudyResult {
  nlohmann::json summary;             ///< results.json without the per-dataset studies
  std::vector<Table1Cell> cells;      ///< Table 1/3 cells
  std::size_t datasets = 0;           ///< datasets that finished
  std::size_t failures = 0;           ///< datasets that failed
  double wall_seconds = 0;            ///< of this invocation
};

/// Runs the study. Throws flynn::Error when neither variant is selected, per_config is 0
/// or every dataset failed.
SyntheticStudyResult run_synthetic_study(const SyntheticStudyOptions& options);

}  // namespace flynn::harness
