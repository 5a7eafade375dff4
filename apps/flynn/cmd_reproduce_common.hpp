#pragma once
// Flags shared by `flynn reproduce openml` and `flynn reproduce synthetic`: the study
// protocol, and the progress log both print to stderr.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_common.hpp"
#include "flynn/harness/study.hpp"
#include "flynn/harness/study_batch.hpp"

namespace flynn::cli::reproduce {

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

/// Progress lines to stderr, or nothing with --quiet.
experiments::StudyLog stderr_log(const CommonOptions& common);

}  // namespace flynn::cli::reproduce
