// flynn reproduce openml|synthetic: the paper's dataset studies, every method on the same
// folds, resumable (experiments::run_openml_study, run_synthetic_study; their options and
// summaries: harness/reproduce.hpp).
//   openml    Table 2, Figure 1 on the datasets of a MANIFEST.tsv folder
//   synthetic Table 1 and the binary-data Table 3 analogue: normalised accuracy ± SE
// --threads are all worker threads; --jobs datasets are studied at once, sharing them.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/harness/reproduce.hpp"

namespace flynn::cli {

namespace {

using namespace flynn::experiments;

CLI::App* reproduce_group(CLI::App& app) { return command_group(app, "reproduce", "Reproduce the paper's experiments"); }

// --budget, --folds, --jobs, --search, --m-scale, --seed of the dataset studies.
struct ProtocolOptions {
  StudyProtocol p;
  int jobs = 1;
  CLI::Option *budget = nullptr, *folds = nullptr;
  void add_to(CLI::App* cmd, const std::string& seed_help) {
    budget = cmd->add_option("--budget", p.budget, "FlyNN search evaluations per dataset (default 60)")
                 ->check(CLI::Range(1u, 100000u));
    folds = cmd->add_option("--folds", p.folds, "Stratified CV folds (default 10)")->check(CLI::Range(2u, 1000u));
    cmd->add_option("--jobs", jobs, "Datasets studied at once, sharing the --threads (default 1)")
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--search", p.design,
                    "FlyNN search design: halving (default: Halton + successive halving), halton, random");
    cmd->add_option("--m-scale", p.m_scale, "FlyNN search: m/d uniform (linear, default) or log-uniform (log)");
    cmd->add_option("--seed", p.seed, seed_help);
  }
  StudyOptions study(bool quick) {
    p.budget_given = budget->count() > 0;
    p.folds_given = folds->count() > 0;
    return study_options(p, quick);
  }
};

// Prints a study's JSON summary or its text.
template <class Result>
void print_result(const CommonOptions& common, const Result& r, const std::string& text) {
  if (common.json) print_json(r.summary);
  else std::cout << text;
}

void add_openml(CLI::App& app) {
  struct Options {
    OpenmlStudyOptions so;
    ProtocolOptions protocol;
    double max_work = 0;
    bool no_plots = false;
    CommonOptions common;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = reproduce_group(app)->add_subcommand(
      "openml", "OpenML study: FlyNN vs kNNC, 1NNC, SBFC, LR, MLP on every dataset of a manifest (Table 2, "
                "Figure 1); resumable");
  cmd->add_option("--data-dir", o->so.data_dir, "Folder with MANIFEST.tsv and <did>_<name>.csv.gz files")->required();
  cmd->add_option("--datasets", o->so.datasets, "Comma-separated subset (did, name or did_name); default: all");
  o->protocol.add_to(cmd, "Seed of folds, search design and baselines (default 0)");
  add_out_option(cmd, o->so.out, "Output folder (default reproduce-openml); reruns resume from it");
  cmd->add_flag("--quick", o->so.quick,
                "Small subset (3-4 cheapest datasets), budget 12, 5 folds: a smoke test in a few minutes");
  cmd->add_option("--max-work", o->max_work, "Guard: hashing additions n*m*s per FlyNN evaluation (default 1e11)");
  cmd->add_option("--tie-tolerance", o->so.tie_tolerance, "Accuracy differences up to this count as ties (default 1e-6)");
  cmd->add_flag("--no-plots", o->no_plots, "Skip the Figure-1 PNGs");
  o->common.add_to(cmd);
  cmd->callback([o] {
    OpenmlStudyOptions so = o->so;
    so.study = o->protocol.study(so.quick);
    if (o->max_work > 0) so.study.search.guard.max_work = o->max_work;
    so.plots = !o->no_plots;
    so.jobs = o->protocol.jobs;
    so.threads = o->common.threads;
    so.log = stderr_study_log(o->common.quiet);
    const OpenmlStudyResult r = run_openml_study(so);
    print_result(o->common, r, openml_summary_text(r, so.out));
  });
}

void add_synthetic(CLI::App& app) {
  struct Options {
    SyntheticStudyOptions so;
    ProtocolOptions protocol;
    std::string variants = "dense,binary";
    CommonOptions common;
    CLI::Option* per_config = nullptr;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = reproduce_group(app)->add_subcommand(
      "synthetic", "Synthetic study: Table 1 (dense) and Table 3 (binary) analogues, normalised accuracy mean ± "
                   "standard error per configuration; resumable");
  add_out_option(cmd, o->so.out, "Output folder (default reproduce-synthetic); reruns resume from it");
  cmd->add_flag("--quick", o->so.quick, "3 datasets of the d=50, n=1000 configurations, budget 12, 5 folds");
  o->per_config = cmd->add_option("--datasets-per-config", o->so.per_config,
                                  "Generated datasets per configuration (default 30)");
  o->protocol.add_to(cmd, "Seed of the data, folds, search and baselines (default 0)");
  cmd->add_option("--variants", o->variants, "dense, binary or dense,binary (default both)");
  o->common.add_to(cmd);
  cmd->callback([o] {
    SyntheticStudyOptions so = o->so;
    select_synthetic_variants(so, o->variants);
    if (so.quick && !o->per_config->count()) so.per_config = 3;
    so.study = o->protocol.study(so.quick);
    so.seed = o->protocol.p.seed;
    so.jobs = o->protocol.jobs;
    so.threads = o->common.threads;
    so.log = stderr_study_log(o->common.quiet);
    const SyntheticStudyResult r = run_synthetic_study(so);
    print_result(o->common, r, synthetic_summary_text(r, so.out));
  });
}

void add_dataset_studies(CLI::App& app) {
  add_openml(app);
  add_synthetic(app);
}

const RegisterCommand registered(70, add_dataset_studies);

}  // namespace

}  // namespace flynn::cli
