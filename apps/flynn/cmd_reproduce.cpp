// flynn reproduce openml|synthetic|scaling|privacy: the paper's studies, resumable. Each
// study's flags, defaults and run are the harness's (flynn/harness/reproduce.hpp):
//   openml    Table 2, Figure 1 on the datasets of a MANIFEST.tsv folder
//   synthetic Table 1 and the binary-data Table 3 analogue: normalised accuracy ± SE
//   scaling   Fig. 2, Tables 5-7: training time and speed-up of FlyNNFL with τ parties
//   privacy   Fig. 3, appendix D.8 (alias: flynn federated privacy-study): DP vs non-private
#include <iostream>
#include <memory>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "cmd_federated_common.hpp"
#include "commands.hpp"
#include "flynn/harness/reproduce.hpp"

namespace flynn::cli {

namespace {

using namespace flynn::harness;

template <class Request>
void add_study(CLI::App* group, const std::string& name, const std::string& help,
               const OptionTable<Request>& fields, const char* progress = nullptr) {
  struct Options {
    Request request;
    CommonOptions common;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = group->add_subcommand(name, help);
  bind_options(cmd, fields, o->request);
  o->common.add_to(cmd);
  cmd->callback([o, progress] {
    ProgressBar bar(progress ? progress : "", progress && !o->common.quiet);
    const StudyOutcome r = o->request.run({o->common.threads, o->common.quiet, bar.callback()});
    bar.finish();
    if (o->common.json) print_json(r.json);
    else std::cout << r.text;
  });
}

void add_reproduce_commands(CLI::App& app) {
  CLI::App* group = command_group(app, "reproduce", "Reproduce the paper's experiments");
  add_study(group, "openml",
            "OpenML study: FlyNN vs kNNC, 1NNC, SBFC, LR, MLP on every dataset of a manifest (Table 2, Figure 1); "
            "resumable",
            openml_study_fields());
  add_study(group, "synthetic",
            "Synthetic study: Table 1 (dense) and Table 3 (binary) analogues, normalised accuracy mean ± standard "
            "error per configuration; resumable",
            synthetic_study_fields());
  add_study(group, "scaling",
            "Training time and speed-up of FlyNNFL for 1, 2, 4, 8, 16 evenly split parties (paper Fig. 2) on "
            "Digits, Letter and Fashion-MNIST",
            scaling_study_fields());
  add_study(group, "privacy",
            "Privacy study (paper Fig. 3): balanced accuracy of DP-FlyNNFL vs non-private over (epsilon, T); "
            "writes CSVs, PNG plots and report.md; resumable",
            privacy_study_fields(), "privacy study");
  // The older name, kept for existing scripts.
  add_study(federated_group(app), "privacy-study", "Alias of 'flynn reproduce privacy'", privacy_study_fields(),
            "privacy study");
}

const RegisterCommand registered(70, add_reproduce_commands);

}  // namespace

}  // namespace flynn::cli
