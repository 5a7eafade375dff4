#include "cmd_reproduce_common.hpp"

#include <cstdio>

namespace flynn::cli::reproduce {

void ProtocolOptions::add_to(CLI::App* cmd, const std::string& seed_help) {
  budget_opt = cmd->add_option("--budget", budget, "FlyNN search evaluations per dataset (default 60)")
                   ->check(CLI::Range(1u, 100000u));
  folds_opt = cmd->add_option("--folds", folds, "Stratified CV folds (default 10)")->check(CLI::Range(2u, 1000u));
  cmd->add_option("--jobs", jobs, "Datasets processed concurrently (default 1)")->check(CLI::Range(1, 1024));
  cmd->add_option("--search", design,
                  "FlyNN search design: halving (default: Halton + successive halving), halton, random");
  cmd->add_option("--m-scale", m_scale, "FlyNN search: m/d uniform (linear, default) or log-uniform (log)");
  cmd->add_option("--seed", seed, seed_help);
}

experiments::StudyOptions ProtocolOptions::study_options(bool quick) const {
  experiments::StudyOptions so;
  so.folds = folds;
  so.fold_seed = seed;
  so.search.budget = budget;
  so.search.design = experiments::parse_search_design(design);
  so.search.space.m_scale = experiments::parse_m_scale(m_scale);
  so.search.seed = seed;
  so.sbfc.seed = seed;
  so.sgd.seed = seed;
  if (quick) {
    // Small but complete: every method, every output, a few minutes at most on 2 cores.
    if (!budget_opt->count()) so.search.budget = 12;
    if (!folds_opt->count()) so.folds = 5;
    so.sbfc.max_work = 2e10;
    so.search.guard.max_work = 2e10;
  }
  return so;
}

experiments::StudyLog stderr_log(const CommonOptions& common) {
  if (common.quiet) return {};
  return [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  };
}

}  // namespace flynn::cli::reproduce
