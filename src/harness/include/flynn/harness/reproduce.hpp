#pragma once
// What `flynn reproduce openml|synthetic|scaling|privacy` are given and print: each study's
// request (its options as given, with their option table: flags, help, bounds), the
// protocol of the dataset studies, the lists of the federated studies (party counts, data
// sets, DP units and post-processings), the progress log, and each study's summary.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/eval/report.hpp"
#include "flynn/option_table.hpp"
#include "flynn/progress.hpp"
#include "flynn/harness/openml_study_runner.hpp"
#include "flynn/harness/privacy_study_runner.hpp"
#include "flynn/harness/scaling_study_runner.hpp"
#include "flynn/harness/study.hpp"
#include "flynn/harness/study_batch.hpp"
#include "flynn/harness/synthetic_study_runner.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// The protocol of a dataset study as given (openml, synthetic).
struct StudyProtocol {
  std::uint32_t budget = 60;  ///< FlyNN search evaluations per dataset
  std::uint32_t folds = 10;
  std::uint64_t seed = 0;     ///< of folds, search design and baselines
  std::string design = "halving", m_scale = "linear";
  int jobs = 1;  ///< datasets studied at once, sharing the threads
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

/// What a study command prints: the summary (with --json) or its text.
using StudyOutcome = Report;

/// How every study is run from a command: `threads` worker threads in all (0 = all cores),
/// progress lines on stderr unless `quiet`, `progress` after each step (the privacy study).
struct StudyRun {
  int threads = 0;
  bool quiet = false;
  ProgressFn progress;
};

/// `flynn reproduce openml` as given (flags: openml_study_fields()).
struct OpenmlStudyRequest {
  OpenmlStudyOptions study;
  StudyProtocol protocol;
  double max_work = 0;  ///< 0: the search guard's default
  bool no_plots = false;
  StudyOutcome run(const StudyRun& how) const;
};
const OptionTable<OpenmlStudyRequest>& openml_study_fields();

/// `flynn reproduce synthetic` as given (flags: synthetic_study_fields()).
struct SyntheticStudyRequest {
  SyntheticStudyOptions study;
  StudyProtocol protocol;
  std::string variants = "dense,binary";
  bool per_config_given = false;  ///< --quick lowers the datasets per configuration otherwise
  StudyOutcome run(const StudyRun& how) const;
};
const OptionTable<SyntheticStudyRequest>& synthetic_study_fields();

/// `flynn reproduce scaling` as given (flags: scaling_study_fields()).
struct ScalingStudyRequest {
  ScalingStudyOptions study;
  std::string datasets = "digits,letter,fashion-mnist", parties = "1,2,4,8,16";
  StudyOutcome run(const StudyRun& how) const;
};
const OptionTable<ScalingStudyRequest>& scaling_study_fields();

/// `flynn reproduce privacy` as given (flags: privacy_study_fields()).
struct PrivacyStudyRequest {
  PrivacyStudyOptions study;
  std::string exponent = "paper";
  std::vector<std::string> units = {"paper"}, postprocesses = {"none"};
  bool no_fashion = false;
  StudyOutcome run(const StudyRun& how) const;
};
const OptionTable<PrivacyStudyRequest>& privacy_study_fields();

/// What each command prints when done.
std::string openml_summary_text(const OpenmlStudyResult& r, const std::string& out);
std::string synthetic_summary_text(const SyntheticStudyResult& r, const std::string& out);
std::string privacy_summary_text(const PrivacyStudyResult& r, const std::string& out);
std::string scaling_summary_text(const ScalingStudyResult& r, const std::string& out);

}  // namespace flynn::harness
