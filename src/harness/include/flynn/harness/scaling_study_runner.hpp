#pragma once
// The scaling study (paper Fig. 2, Tables 5–7; spec section 7) as one resumable run:
// training time and speed-up of FlyNNFL with τ evenly split parties on Digits, Letter and
// Fashion-MNIST, written as runs.csv, scaling.csv, per_dataset.csv, scaling.png, report.md
// and results.json. `flynn reproduce scaling` parses its flags into ScalingStudyOptions
// and prints the result.
//
// Each run (data set × τ × repetition) is one checkpoint unit under OUT/runs/, so an
// interrupted study resumes with the runs it finished.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/config.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/harness/study_batch.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// What to run and where.
struct ScalingStudyOptions {
  std::string out = "flynn-scaling";  ///< output folder; reruns resume from it
  std::string openml_dir = "../shared/data/openml";  ///< MANIFEST.tsv folder with Letter (did 6)
  std::string fashion_dir = kDefaultFashionMnistDir;  ///< Fashion-MNIST IDX folder
  std::string digits = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";  ///< Digits CSV
  /// Data sets, a subset of digits, letter, fashion-mnist; one that cannot be read is
  /// skipped with a note.
  std::vector<std::string> datasets = {"digits", "letter", "fashion-mnist"};
  std::vector<int> parties = {1, 2, 4, 8, 16};  ///< party counts τ (sorted, distinct, ≥ 1)
  /// Digits only, parties 1, 2, 4, 2 repetitions (overrides datasets and parties).
  bool quick = false;
  int repetitions = 0;                ///< per party count; 0 = 10 (2 when quick)
  std::uint64_t seed = Defaults::seed;  ///< seed of the lifting matrix and the splits
  int threads = 0;                    ///< threads of the central model's training (0 = all cores)
  std::string command;                ///< the command line the report states
  StudyLog log;                       ///< notes and one progress line per run (none when empty)
};

/// What the study found (everything is also on disk under `out`).
struct ScalingStudyResult {
  nlohmann::json summary;      ///< results.json
  std::string table_markdown;  ///< time and speed-up per τ, then the CPU critical path
  double seconds = 0;          ///< wall time of this invocation
};

/// Runs the study. Throws flynn::Error when no data set is available or an option is
/// invalid (an unknown data set name, no party counts, repetitions < 0).
ScalingStudyResult run_scaling_study(const ScalingStudyOptions& options);

}  // namespace flynn::harness
