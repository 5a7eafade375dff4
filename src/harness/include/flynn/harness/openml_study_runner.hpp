#pragma once
// The OpenML study (paper Table 2, Figure 1) on the datasets of a MANIFEST.tsv folder:
// every method on the same folds, resumable, written as CSVs, PNG figures, report.md and
// results.json. `flynn reproduce openml` parses its flags into OpenmlStudyOptions and
// prints the result.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/harness/statistics.hpp"
#include "flynn/harness/study.hpp"
#include "flynn/harness/study_batch.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// What to run and where.
struct OpenmlStudyOptions {
  std::string data_dir;           ///< folder with MANIFEST.tsv and <did>_<name>.csv.gz files
  std::string datasets;           ///< comma-separated subset (did, name or did_name); empty = all
  std::string out = "reproduce-openml";  ///< output folder; reruns resume from it
  /// Small subset: without `datasets`, the three cheapest datasets plus the cheapest one
  /// with three or more classes. (The lower budget and folds are in `study`.)
  bool quick = false;
  bool plots = true;              ///< draw the Figure-1 PNGs
  double tie_tolerance = kDefaultTieTolerance;  ///< accuracy differences counted as ties
  int jobs = 1;                   ///< datasets processed concurrently
  int threads = 0;                ///< total threads (0 = all cores)
  StudyOptions study;             ///< protocol: folds, search, baselines, seeds
  std::string command = "flynn reproduce openml";  ///< for the report, when /proc is unreadable
  StudyLog log;                   ///< progress lines and warnings (none when empty)
};

/// What the study found (everything is also on disk under `out`).
struct OpenmlStudyResult {
  nlohmann::json summary;               ///< results.json without the per-dataset studies
  std::vector<Comparison> table2;       ///< FlyNN against each baseline
  std::size_t datasets = 0;             ///< datasets that finished
  std::size_t failures = 0;             ///< datasets failed or skipped
  double wall_seconds = 0;              ///< of this invocation
};

/// Runs the study. Datasets without a data file or whose study fails are reported, never
/// fatal. Throws flynn::Error when the manifest is unusable, no dataset has a file, or
/// every dataset failed.
OpenmlStudyResult run_openml_study(const OpenmlStudyOptions& options);

}  // namespace flynn::harness
