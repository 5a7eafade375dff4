#pragma once
// What `flynn reproduce openml|synthetic|scaling|privacy` take as text and print, as study
// options and summaries: the protocol of the dataset studies, the lists of the federated
// studies (party counts, data sets, DP units and post-processings), the progress log, and
// each study's short text summary.
#include <cstdint>
#include <string>
#include <vector>

#include "flynn/harness/openml_study_runner.hpp"
#include "flynn/harness/privacy_study_runner.hpp"
#include "flynn/harness/scaling_study_runner.hpp"
#include "flynn/harness/study.hpp"
#include "flynn/harness/study_batch.hpp"
#include "flynn/harness/synthetic_study_runner.hpp"

namespace flynn::experiments {

/// The protocol of a dataset study as given (openml, synthetic).
struct StudyProtocol {
  std::uint32_t budget = 60;  ///< FlyNN search evaluations per dataset
  std::uint32_t folds = 10;
  std::uint64_t seed = 0;     ///< of folds, search design and baselines
  std::string design = "halving", m_scale = "linear";
  bool budget_given = false, folds_given = false;  ///< --quick lowers only what was not given
};

/// The study's settings; `quick` lowers budget and folds (unless given) and the SBFC and
/// search work guards, for smoke runs. Throws flynn::Error on an unknown design or m scale.
StudyOptions study_options(const StudyProtocol& protocol, bool quick);

/// Progress lines to stderr, or none when `quiet`.
StudyLog stderr_study_log(bool quiet);

/// Privacy units by name (dp.hpp), each once in the order given.
std::vector<federated::DpUnit> parse_dp_units(const std::vector<std::string>& names);
/// Post-processings by name, "all" meaning every mode, each once in the order given.
std::vector<federated::DpPostprocess> parse_dp_postprocesses(const std::vector<std::string>& names);
/// "1,2,4": party counts, each in [1, 1024]; throws flynn::Error naming --parties.
std::vector<int> parse_party_counts(const std::string& list);
/// "a,b": the items of a comma-separated list.
std::vector<std::string> split_list(const std::string& list);
/// "dense", "binary" or both: which configurations of the synthetic study run. Throws
/// flynn::Error naming --variants when neither.
void select_synthetic_variants(SyntheticStudyOptions& options, const std::string& variants);

/// What each command prints when done.
std::string openml_summary_text(const OpenmlStudyResult& r, const std::string& out);
std::string synthetic_summary_text(const SyntheticStudyResult& r, const std::string& out);
std::string privacy_summary_text(const PrivacyStudyResult& r, const std::string& out);
std::string scaling_summary_text(const ScalingStudyResult& r, const std::string& out);

}  // namespace flynn::experiments
