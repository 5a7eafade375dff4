// flynn reproduce scaling: training time and speed-up of FlyNNFL with τ evenly split
// parties (paper Fig. 2 and Tables 5–7; spec section 7), as CSV + JSON + PNG + report.md
// (experiments::run_scaling_study).
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "cmd_reproduce_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/harness/scaling_study_runner.hpp"

namespace flynn::cli {

namespace {

struct ScalingOptions {
  experiments::ScalingStudyOptions study;
  std::string datasets = "digits,letter,fashion-mnist";
  std::string parties = "1,2,4,8,16";
  CommonOptions common;
};

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

std::vector<int> parse_parties(const std::string& list) {
  std::vector<int> out;
  for (const std::string& item : split_list(list)) {
    int v = 0;
    try {
      std::size_t used = 0;
      v = std::stoi(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw Error(fmt::format("--parties: '{}' is not a number", item));
    }
    if (v < 1 || v > 1024) throw Error(fmt::format("--parties: {} must be in [1, 1024]", v));
    out.push_back(v);
  }
  if (out.empty()) throw Error("--parties: give at least one party count");
  return out;
}

void run_scaling(const ScalingOptions& o) {
  experiments::ScalingStudyOptions so = o.study;
  so.parties = parse_parties(o.parties);
  so.datasets = split_list(o.datasets);
  for (const std::string& d : so.datasets)
    if (d != "digits" && d != "letter" && d != "fashion-mnist")
      throw Error(fmt::format("--datasets: '{}' is not one of digits, letter, fashion-mnist", d));
  if (so.repetitions < 0) throw Error("--repetitions must be positive");
  so.threads = o.common.threads;
  so.command = experiments::command_line(fmt::format("flynn reproduce scaling --out {}", so.out));
  so.log = reproduce::stderr_log(o.common);
  const experiments::ScalingStudyResult r = experiments::run_scaling_study(so);
  if (o.common.json) {
    print_json(r.summary);
    return;
  }
  std::cout << fmt::format("scaling study on {} in {:.1f} s → {}/\n", r.summary["machine"].get<std::string>(),
                           r.seconds, so.out)
            << r.table_markdown;
}

void add_reproduce_scaling(CLI::App& app) {
  auto o = std::make_shared<ScalingOptions>();
  CLI::App* group = command_group(app, "reproduce", "Reproduce the paper's experiments");
  CLI::App* cmd = group->add_subcommand(
      "scaling", "Training time and speed-up of FlyNNFL for 1, 2, 4, 8, 16 evenly split parties "
                 "(paper Fig. 2) on Digits, Letter and Fashion-MNIST");
  add_out_option(cmd, o->study.out, "Output folder (default flynn-scaling); reruns resume");
  cmd->add_flag("--quick", o->study.quick, "Digits only, parties 1,2,4, 2 repetitions (for CI)");
  cmd->add_option("--repetitions", o->study.repetitions, "Repetitions per party count (default 10)");
  cmd->add_option("--parties", o->parties, "Party counts (default 1,2,4,8,16)");
  cmd->add_option("--datasets", o->datasets, "Subset of digits,letter,fashion-mnist (default all)");
  cmd->add_option("--data-dir", o->study.openml_dir,
                  "OpenML folder with MANIFEST.tsv, for Letter (did 6; skipped when absent)");
  add_fashion_dir_option(cmd, o->study.fashion_dir, "Fashion-MNIST IDX folder");
  cmd->add_option("--digits", o->study.digits, "Digits CSV (default: scikit-learn's copy)");
  cmd->add_option("--seed", o->study.seed,
                  fmt::format("Seed of the lifting matrix and the splits (default {})", Defaults::seed));
  o->common.add_to(cmd);
  cmd->callback([o] { run_scaling(*o); });
}

const RegisterCommand registered(72, add_reproduce_scaling);

}  // namespace

}  // namespace flynn::cli
