// flynn reproduce scaling|privacy: the paper's federated studies, resumable
// (experiments::run_scaling_study, run_privacy_study; their options and summaries:
// harness/reproduce.hpp).
//   scaling   Fig. 2, Tables 5-7: training time and speed-up of FlyNNFL with τ parties
//   privacy   Fig. 3, appendix D.8 (alias: flynn federated privacy-study): DP vs non-private
// --repetitions is the flag of every study that repeats (hidden alias: bench's --repeats).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/harness/reproduce.hpp"

namespace flynn::cli {

namespace {

using namespace flynn::experiments;

CLI::App* reproduce_group(CLI::App& app) { return command_group(app, "reproduce", "Reproduce the paper's experiments"); }

// Prints a study's JSON summary or its text.
template <class Result>
void print_result(const CommonOptions& common, const Result& r, const std::string& text) {
  if (common.json) print_json(r.summary);
  else std::cout << text;
}

void add_scaling(CLI::App& app) {
  struct Options {
    ScalingStudyOptions so;
    std::string datasets = "digits,letter,fashion-mnist", parties = "1,2,4,8,16";
    CommonOptions common;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = reproduce_group(app)->add_subcommand(
      "scaling", "Training time and speed-up of FlyNNFL for 1, 2, 4, 8, 16 evenly split parties (paper Fig. 2) "
                 "on Digits, Letter and Fashion-MNIST");
  add_out_option(cmd, o->so.out, "Output folder (default flynn-scaling); reruns resume");
  cmd->add_flag("--quick", o->so.quick, "Digits only, parties 1,2,4, 2 repetitions (for CI)");
  cmd->add_option("--repetitions", o->so.repetitions, "Repetitions per party count (default 10)");
  cmd->add_option("--repeats", o->so.repetitions)->group("");
  cmd->add_option("--parties", o->parties, "Party counts (default 1,2,4,8,16)");
  cmd->add_option("--datasets", o->datasets, "Subset of digits,letter,fashion-mnist (default all)");
  cmd->add_option("--data-dir", o->so.openml_dir, "OpenML folder with MANIFEST.tsv, for Letter (did 6; skipped when absent)");
  add_fashion_dir_option(cmd, o->so.fashion_dir, "Fashion-MNIST IDX folder");
  cmd->add_option("--digits", o->so.digits, "Digits CSV (default: scikit-learn's copy)");
  cmd->add_option("--seed", o->so.seed, fmt::format("Seed of the lifting matrix and the splits (default {})", Defaults::seed));
  o->common.add_to(cmd);
  cmd->callback([o] {
    ScalingStudyOptions so = o->so;
    so.parties = parse_party_counts(o->parties);
    so.datasets = split_list(o->datasets);
    so.threads = o->common.threads;
    so.command = command_line(fmt::format("flynn reproduce scaling --out {}", so.out));
    so.log = stderr_study_log(o->common.quiet);
    const ScalingStudyResult r = run_scaling_study(so);
    print_result(o->common, r, scaling_summary_text(r, so.out));
  });
}

// The same command under two names: `reproduce privacy`, and the older
// `federated privacy-study` kept for existing scripts.
void add_privacy_to(CLI::App* group, const std::string& name, const std::string& help) {
  struct Options {
    PrivacyStudyOptions so;
    std::string exponent = "paper";
    std::vector<std::string> units = {"paper"}, postprocesses = {"none"};
    bool no_fashion = false;
    CommonOptions common;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = group->add_subcommand(name, help);
  add_out_option(cmd, o->so.out, "Output folder (default flynn-privacy-study); reruns resume");
  cmd->add_flag("--quick", o->so.quick, "A small grid (n = 10^4, 3 epsilons, 4 T values, 2 repetitions) for CI");
  cmd->add_option("--repetitions", o->so.repetitions, "Repetitions per setting (default 10, 2 with --quick)");
  cmd->add_option("--repeats", o->so.repetitions)->group("");
  add_fashion_dir_option(cmd, o->so.fashion_dir, "Fashion-MNIST IDX folder (skipped when missing)");
  cmd->add_flag("--no-fashion", o->no_fashion, "Only the synthetic part");
  cmd->add_flag("--multiclass", o->so.multiclass,
                "Add a 26-class Letter-shaped synthetic group (the below-chance setting of docs/federated.md; "
                "not in the paper's study)");
  cmd->add_option("--dp-exponent", o->exponent, "paper (default) or reference, see docs/federated.md");
  cmd->add_option("--dp-unit", o->units,
                  "Privacy units to compare, comma-separated: paper (default: epsilon/parties each), record "
                  "(epsilon each, parallel composition)")
      ->delimiter(',');
  cmd->add_option("--dp-postprocess", o->postprocesses,
                  "Post-processings of the release to compare, comma-separated: none (default, the paper's "
                  "model), threshold, noise-units, class-balance, noise-units+class-balance, or all")
      ->delimiter(',');
  cmd->add_option("--seed", o->so.seed,
                  fmt::format("Seed of data, lifting matrices and splits (default {})", Defaults::seed));
  o->common.add_to(cmd);
  cmd->callback([o] {
    PrivacyStudyOptions so = o->so;
    so.exponent = federated::parse_dp_exponent(o->exponent);
    so.units = parse_dp_units(o->units);
    so.postprocesses = parse_dp_postprocesses(o->postprocesses);
    so.fashion = !o->no_fashion;
    so.threads = o->common.threads;
    so.command = command_line(fmt::format("flynn reproduce privacy --out {}", so.out));
    so.log = stderr_study_log(o->common.quiet);
    ProgressBar bar("privacy study", !o->common.quiet);
    so.progress = bar.callback();
    const PrivacyStudyResult r = run_privacy_study(so);
    bar.finish();
    print_result(o->common, r, privacy_summary_text(r, so.out));
  });
}

void add_federated_studies(CLI::App& app) {
  add_scaling(app);
  add_privacy_to(reproduce_group(app), "privacy",
                 "Privacy study (paper Fig. 3): balanced accuracy of DP-FlyNNFL vs non-private over (epsilon, T); "
                 "writes CSVs, PNG plots and report.md; resumable");
  add_privacy_to(federated_group(app), "privacy-study", "Alias of 'flynn reproduce privacy'");
}

const RegisterCommand registered(72, add_federated_studies);

}  // namespace

}  // namespace flynn::cli
