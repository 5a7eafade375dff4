// flynn demo | bench, on Fashion-MNIST (flynn/harness/fashion_mnist_commands.hpp):
//   demo   the main job: flynn's defaults and the paper's setting beside exact kNN
//   bench  the speed benchmark, peers measured in the same run
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "bind_options.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/harness/fashion_mnist_commands.hpp"

namespace flynn::cli {

namespace {

using namespace flynn::harness;

// A command of `fields` and --threads/--quiet/--json whose run returns its report.
template <class Request, class Run>
void add_report_command(CLI::App& app, const char* name, const char* help, const OptionTable<Request>& fields,
                        Run run) {
  struct Options {
    Request request;
    CommonOptions common;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(name, help);
  bind_options(cmd, fields, o->request);
  o->common.add_to(cmd);
  cmd->callback([o, run] { print_report(run(o->request, o->common), o->common.json); });
}

void add_demo_command(CLI::App& app) {
  add_report_command(app, "demo",
                     "The main job: Fashion-MNIST with flynn's defaults and the paper's setting, beside exact kNN",
                     demo_fields(), [](const DemoRequest& request, const CommonOptions& common) {
                       std::optional<ProgressBar> bar;  // one per timed step, shown while it lasts
                       return run_demo_command(request, common.threads, phase_progress(bar, common.quiet));
                     });
}

void add_bench_command(CLI::App& app) {
  add_report_command(
      app, "bench", "Speed benchmark on Fashion-MNIST: FlyNN vs FAISS exact kNN in one run, kernel vs peak add rate",
      bench_fields(), [](const BenchRequest& request, const CommonOptions& common) {
        // The long comparisons (--peers, --file-path) say on stderr what they are timing.
        auto log = [quiet = common.quiet](const std::string& line) {
          if (!quiet) fmt::print(stderr, "flynn bench: {}\n", line);
        };
        return run_bench_command(request, common.threads, log);
      });
}

const RegisterCommand demo(5, add_demo_command);
const RegisterCommand bench(50, add_bench_command);

}  // namespace

}  // namespace flynn::cli
