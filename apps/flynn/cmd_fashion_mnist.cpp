// flynn demo | bench, on Fashion-MNIST (flynn/harness/fashion_mnist_commands.hpp):
//   demo   the main job: flynn's defaults and the paper's setting beside exact kNN
//   bench  the speed benchmark, peers measured in the same run
#include <memory>
#include <optional>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/harness/fashion_mnist_commands.hpp"

namespace flynn::cli {

namespace {

using namespace flynn::experiments;

void add_demo_command(CLI::App& app) {
  struct Options {
    DemoRequest request;
    CommonOptions common;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "The main job: Fashion-MNIST with flynn's defaults and the paper's setting, beside exact kNN");
  bind_options(cmd, demo_fields(), o->request);
  o->common.add_to(cmd);
  cmd->callback([o] {
    std::optional<ProgressBar> bar;  // one per timed step, shown while it lasts
    print_report(run_demo_command(o->request, o->common.threads, phase_progress(bar, o->common.quiet)),
                 o->common.json);
  });
}

void add_bench_command(CLI::App& app) {
  struct Options {
    BenchRequest request;
    CommonOptions common;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Speed benchmark on Fashion-MNIST: FlyNN vs FAISS exact kNN in one run, kernel vs peak add rate");
  bind_options(cmd, bench_fields(), o->request);
  o->common.add_to(cmd);
  cmd->callback([o] { print_report(run_bench_command(o->request, o->common.threads), o->common.json); });
}

const RegisterCommand demo(5, add_demo_command);
const RegisterCommand bench(50, add_bench_command);

}  // namespace

}  // namespace flynn::cli
