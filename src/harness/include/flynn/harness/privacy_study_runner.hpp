#pragma once
// The paper's privacy study (Fig. 3, appendix D.8; spec section 7) as one resumable run:
// balanced accuracy of DP-FlyNNFL against the non-private model over a grid of (ε, T), on
// synthetic data and (when available) Fashion-MNIST, written as CSVs, PNG plots,
// report.md and results.json. `flynn reproduce privacy` parses its flags into
// PrivacyStudyOptions and prints the result.
//
// Each trial (a group of settings × a repetition) is one checkpoint unit under
// OUT/trials/, so an interrupted run resumes with the trials it finished.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/config.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/harness/study_batch.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/federated/dp_postprocess.hpp"
#include "flynn/progress.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// What to run and where.
struct PrivacyStudyOptions {
  std::string out = "flynn-privacy-study";  ///< output folder; reruns resume from it
  std::string fashion_dir = kDefaultFashionMnistDir;  ///< IDX folder (skipped when unreadable)
  bool fashion = true;         ///< include the Fashion-MNIST part
  /// Add a 26-class group ("synthetic-26": a Letter-shaped mixture, 26 classes in ℝ^16,
  /// 770 training and 200 test rows per class, m = 4096, s = 4, ρ = 32, γ = 0.8: the
  /// setting of the below-chance report, docs/guide/federated.md). Not in the paper's study.
  bool multiclass = false;
  /// A small grid for CI: n = 10^4 only, 3 epsilons, 4 T values, 2 repetitions, a small
  /// Fashion-MNIST pair.
  bool quick = false;
  int repetitions = 0;         ///< per setting; 0 = 10 (2 when quick)
  federated::DpExponent exponent = federated::DpExponent::Paper;  ///< exponential mechanism's exponent
  /// Privacy units to compare (default: the paper's split alone, the paper's study).
  std::vector<federated::DpUnit> units = {federated::DpUnit::Paper};
  /// Post-processings to compare on every release (default: none, the paper's model).
  std::vector<federated::DpPostprocess> postprocesses = {federated::DpPostprocess::None};
  std::uint64_t seed = Defaults::seed;  ///< seed of data, lifting matrices and splits
  int threads = 0;             ///< trials run concurrently (0 = all cores)
  std::string command;         ///< the command line the report states
  StudyLog log;                ///< notes and warnings (none when empty)
  ProgressFn progress;         ///< (trials done, trials to run) after each trial
};

/// What the study found (everything is also on disk under `out`).
struct PrivacyStudyResult {
  nlohmann::json summary;      ///< results.json
  std::string table_markdown;  ///< the report's table: best DP accuracy per ε beside the non-private one
  std::size_t groups = 0;      ///< (data, setting) groups
  int repetitions = 0;         ///< repetitions per group
  double seconds = 0;          ///< wall time of this invocation
  double cpu_seconds = 0;      ///< CPU time of this invocation, all threads
};

/// Runs the study. Throws flynn::Error on invalid options (repetitions < 0, no unit or no
/// post-processing).
PrivacyStudyResult run_privacy_study(const PrivacyStudyOptions& options);

}  // namespace flynn::harness
