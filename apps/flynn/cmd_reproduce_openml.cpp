// flynn reproduce openml: the paper's OpenML study (Table 2, Figure 1) on the datasets of a
// MANIFEST.tsv directory, every method on the same folds, resumable
// (experiments::run_openml_study).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cmd_reproduce_common.hpp"
#include "commands.hpp"
#include "flynn/harness/openml_study_runner.hpp"
#include "flynn/harness/report.hpp"

namespace flynn::cli {

namespace {

struct OpenmlOptions {
  experiments::OpenmlStudyOptions study;
  reproduce::ProtocolOptions protocol;
  double max_work = 0;
  bool no_plots = false;
  CommonOptions common;
};

void run_openml(OpenmlOptions& o) {
  experiments::OpenmlStudyOptions so = o.study;
  so.study = o.protocol.study_options(so.quick);
  if (o.max_work > 0) so.study.search.guard.max_work = o.max_work;
  so.plots = !o.no_plots;
  so.jobs = o.protocol.jobs;
  so.threads = o.common.threads;
  so.log = reproduce::stderr_log(o.common);
  const experiments::OpenmlStudyResult r = experiments::run_openml_study(so);
  if (o.common.json) {
    print_json(r.summary);
    return;
  }
  std::cout << fmt::format("{} datasets ({} failed or skipped) in {}; results in {}/\n", r.datasets, r.failures,
                           experiments::format_duration(r.wall_seconds), so.out);
  std::cout << "FlyNN vs   n   frac.better  W/T/L     median impr.  t-test p  Wilcoxon p\n";
  for (const auto& c : r.table2)
    std::cout << fmt::format("{:<8} {:>3}   {:>6.2f}     {:>2}/{}/{:<4}  {:>8.2f}%   {:>8}  {:>8}\n", c.baseline,
                             c.n_datasets, c.frac_better, c.wins, c.ties, c.losses, 100 * c.median_improvement,
                             experiments::format_pvalue(c.ttest_p), experiments::format_pvalue(c.wilcoxon_p));
}

void add_reproduce_openml(CLI::App& app) {
  CLI::App* group = command_group(app, "reproduce", "Reproduce the paper's experiments");
  auto o = std::make_shared<OpenmlOptions>();
  CLI::App* cmd = group->add_subcommand(
      "openml", "OpenML study: FlyNN vs kNNC, 1NNC, SBFC, LR, MLP on every dataset of a manifest "
                "(Table 2, Figure 1); resumable");
  cmd->add_option("--data-dir", o->study.data_dir, "Folder with MANIFEST.tsv and <did>_<name>.csv.gz files")
      ->required();
  cmd->add_option("--datasets", o->study.datasets, "Comma-separated subset (did, name or did_name); default: all");
  o->protocol.add_to(cmd, "Seed of folds, search design and baselines (default 0)");
  add_out_option(cmd, o->study.out, "Output folder (default reproduce-openml); reruns resume from it");
  cmd->add_flag("--quick", o->study.quick,
                "Small subset (3-4 cheapest datasets), budget 12, 5 folds: a smoke test in a few minutes");
  cmd->add_option("--max-work", o->max_work, "Guard: hashing additions n*m*s per FlyNN evaluation (default 1e11)");
  cmd->add_option("--tie-tolerance", o->study.tie_tolerance,
                  "Accuracy differences up to this count as ties (default 1e-6)");
  cmd->add_flag("--no-plots", o->no_plots, "Skip the Figure-1 PNGs");
  o->common.add_to(cmd);
  cmd->callback([o] { run_openml(*o); });
}

const RegisterCommand registered(70, add_reproduce_openml);

}  // namespace

}  // namespace flynn::cli
