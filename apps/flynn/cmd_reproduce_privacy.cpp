// flynn reproduce privacy (alias: flynn federated privacy-study): the paper's privacy
// experiment (Fig. 3, appendix D.8; spec section 7) in one command — CSVs, PNG plots and a
// Markdown report (experiments::run_privacy_study).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cmd_federated_common.hpp"
#include "cmd_reproduce_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/harness/privacy_study_runner.hpp"
#include "flynn/federated/dp_postprocess.hpp"

namespace flynn::cli {

namespace {

struct PrivacyOptions {
  experiments::PrivacyStudyOptions study;
  std::string exponent = "paper";
  std::vector<std::string> units = {"paper"}, postprocesses = {"none"};
  bool no_fashion = false;
  CommonOptions common;
};

void run_privacy(const PrivacyOptions& o) {
  experiments::PrivacyStudyOptions so = o.study;
  so.exponent = federated::parse_dp_exponent(o.exponent);
  so.units.clear();
  for (const std::string& u : o.units) so.units.push_back(federated::parse_dp_unit(u));
  so.postprocesses.clear();
  for (const std::string& p : o.postprocesses) {
    if (p == "all") {
      for (federated::DpPostprocess x : federated::all_dp_postprocesses()) so.postprocesses.push_back(x);
      continue;
    }
    so.postprocesses.push_back(federated::parse_dp_postprocess(p));
  }
  // Each unit and mode once, in the order given (a repeat would double the work for nothing).
  const auto dedupe = [](auto& v) {
    for (std::size_t i = 0; i < v.size(); ++i)
      for (std::size_t j = v.size(); j-- > i + 1;)
        if (v[j] == v[i]) v.erase(v.begin() + static_cast<long>(j));
  };
  dedupe(so.units);
  dedupe(so.postprocesses);
  so.fashion = !o.no_fashion;
  so.threads = o.common.threads;
  so.command = experiments::command_line(fmt::format("flynn reproduce privacy --out {}", so.out));
  so.log = reproduce::stderr_log(o.common);
  if (so.repetitions < 0) throw Error("--repetitions must be positive");
  ProgressBar bar("privacy study", !o.common.quiet);
  so.progress = bar.callback();
  const experiments::PrivacyStudyResult r = experiments::run_privacy_study(so);
  bar.finish();
  if (o.common.json) {
    print_json(r.summary);
    return;
  }
  std::cout << fmt::format("privacy study: {} groups × {} repetitions in {:.1f} s ({:.1f} s CPU) → {}/\n", r.groups,
                           r.repetitions, r.seconds, r.cpu_seconds, so.out)
            << r.table_markdown;
}

// The same command under two names: `reproduce privacy`, and the older
// `federated privacy-study` kept for existing scripts.
void add_privacy_to(CLI::App* group, const std::string& name, const std::string& help) {
  auto o = std::make_shared<PrivacyOptions>();
  CLI::App* cmd = group->add_subcommand(name, help);
  add_out_option(cmd, o->study.out, "Output folder (default flynn-privacy-study); reruns resume");
  cmd->add_flag("--quick", o->study.quick, "A small grid (n = 10^4, 3 epsilons, 4 T values, 2 repetitions) for CI");
  cmd->add_option("--repetitions", o->study.repetitions, "Repetitions per setting (default 10, 2 with --quick)");
  add_fashion_dir_option(cmd, o->study.fashion_dir, "Fashion-MNIST IDX folder (skipped when missing)");
  cmd->add_flag("--no-fashion", o->no_fashion, "Only the synthetic part");
  cmd->add_flag("--multiclass", o->study.multiclass,
                "Add a 26-class Letter-shaped synthetic group (the below-chance setting of "
                "docs/federated.md; not in the paper's study)");
  cmd->add_option("--dp-exponent", o->exponent, "paper (default) or reference, see docs/federated.md");
  cmd->add_option("--dp-unit", o->units,
                  "Privacy units to compare, comma-separated: paper (default: epsilon/parties each), "
                  "record (epsilon each, parallel composition)")
      ->delimiter(',');
  cmd->add_option("--dp-postprocess", o->postprocesses,
                  "Post-processings of the release to compare, comma-separated: none (default, the "
                  "paper's model), threshold, noise-units, class-balance, noise-units+class-balance, or "
                  "all")
      ->delimiter(',');
  cmd->add_option("--seed", o->study.seed,
                  fmt::format("Seed of data, lifting matrices and splits (default {})", Defaults::seed));
  o->common.add_to(cmd);
  cmd->callback([o] { run_privacy(*o); });
}

void add_reproduce_privacy(CLI::App& app) {
  add_privacy_to(command_group(app, "reproduce", "Reproduce the paper's experiments"), "privacy",
                 "Privacy study (paper Fig. 3): balanced accuracy of DP-FlyNNFL vs non-private over "
                 "(epsilon, T); writes CSVs, PNG plots and report.md; resumable");
  add_privacy_to(federated_group(app), "privacy-study", "Alias of 'flynn reproduce privacy'");
}

const RegisterCommand registered(73, add_reproduce_privacy);

}  // namespace

}  // namespace flynn::cli
