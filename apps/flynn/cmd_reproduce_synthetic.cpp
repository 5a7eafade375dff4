// flynn reproduce synthetic: the paper's synthetic study (Table 1, and the binary-data
// Table 3 analogue): generated datasets, every method on the same folds, normalised
// accuracy mean ± standard error per configuration; resumable
// (experiments::run_synthetic_study).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cmd_reproduce_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/harness/synthetic_study_runner.hpp"

namespace flynn::cli {

namespace {

struct SyntheticOptions {
  experiments::SyntheticStudyOptions study;
  reproduce::ProtocolOptions protocol;
  std::string variants = "dense,binary";
  CommonOptions common;
  CLI::Option* per_config_opt = nullptr;
};

void run_synthetic(SyntheticOptions& o) {
  experiments::SyntheticStudyOptions so = o.study;
  so.dense = o.variants.find("dense") != std::string::npos;
  so.binary = o.variants.find("binary") != std::string::npos;
  if (!so.dense && !so.binary) throw Error(fmt::format("--variants '{}': give dense, binary or both", o.variants));
  if (so.quick && !o.per_config_opt->count()) so.per_config = 3;
  if (so.per_config == 0) throw Error("--datasets-per-config must be at least 1");
  so.study = o.protocol.study_options(so.quick);
  so.seed = o.protocol.seed;
  so.jobs = o.protocol.jobs;
  so.threads = o.common.threads;
  so.log = reproduce::stderr_log(o.common);
  const experiments::SyntheticStudyResult r = experiments::run_synthetic_study(so);
  if (o.common.json) {
    print_json(r.summary);
    return;
  }
  std::cout << fmt::format("{} synthetic datasets ({} failed) in {}; results in {}/\n", r.datasets, r.failures,
                           experiments::format_duration(r.wall_seconds), so.out);
  for (const auto& c : r.cells)
    std::cout << fmt::format("{:<34} {:<6} {:+.3f} ± {:.3f}  (n = {})\n", c.label, c.method, c.normalized.mean,
                             c.normalized.se, c.normalized.n);
}

void add_reproduce_synthetic(CLI::App& app) {
  CLI::App* group = command_group(app, "reproduce", "Reproduce the paper's experiments");
  auto o = std::make_shared<SyntheticOptions>();
  CLI::App* cmd = group->add_subcommand(
      "synthetic", "Synthetic study: Table 1 (dense) and Table 3 (binary) analogues, normalised "
                   "accuracy mean ± standard error per configuration; resumable");
  add_out_option(cmd, o->study.out, "Output folder (default reproduce-synthetic); reruns resume from it");
  cmd->add_flag("--quick", o->study.quick, "3 datasets of the d=50, n=1000 configurations, budget 12, 5 folds");
  o->per_config_opt = cmd->add_option("--datasets-per-config", o->study.per_config,
                                      "Generated datasets per configuration (default 30)");
  o->protocol.add_to(cmd, "Seed of the data, folds, search and baselines (default 0)");
  cmd->add_option("--variants", o->variants, "dense, binary or dense,binary (default both)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_synthetic(*o); });
}

const RegisterCommand registered(71, add_reproduce_synthetic);

}  // namespace

}  // namespace flynn::cli
