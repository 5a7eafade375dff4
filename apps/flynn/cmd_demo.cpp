// flynn demo: the main job. Fashion-MNIST with flynn's defaults and the paper's setting,
// next to exact kNN (FAISS), on the standard 60000/10000 split.
#include <iostream>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/harness/fashion_mnist_demo.hpp"
#include "flynn/classifier.hpp"
#include "flynn/error.hpp"
#include "flynn/baselines/knn.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"
#include "flynn/metrics.hpp"

namespace flynn::cli {

namespace {

struct DemoOptions {
  std::string fashion_dir = experiments::kDefaultFashionMnistDir;
  std::string out = "flynn-demo";
  std::uint32_t knn_k = 10;
  bool skip_knn = false;
  CommonOptions common;
};

void run_demo(const DemoOptions& o) {
  const Dataset train = experiments::load_fashion_mnist(o.fashion_dir, false);
  Dataset test = experiments::load_fashion_mnist(o.fashion_dir, true);
  test.relabel(train.classes);
  experiments::DemoOptions demo;
  demo.out_dir = o.out;
  demo.knn_k = o.knn_k;
  demo.knn = !o.skip_knn;
  demo.threads = o.common.threads;
  std::optional<ProgressBar> bar;  // one per timed step, shown while it lasts
  demo.progress = [&](std::string_view step) -> ProgressFn {
    bar.reset();
    if (step.empty()) return {};
    return bar.emplace(std::string(step), !o.common.quiet).callback();
  };
  const std::vector<experiments::DemoResult> results = experiments::run_demo(train, test, demo);
  if (o.common.json) {
    print_json({{"command", "demo"},
                {"data_dir", o.fashion_dir},
                {"train_rows", train.n_rows},
                {"test_rows", test.n_rows},
                {"features", train.n_features},
                {"threads", o.common.threads},
                {"results", experiments::to_json(results)}});
    return;
  }
  std::cout << fmt::format("Fashion-MNIST: {} training rows, {} test rows, {} features ({})\n\n",
                           train.n_rows, test.n_rows, train.n_features, o.fashion_dir)
            << experiments::to_text(results, o.out);
}

void add_demo_command(CLI::App& app) {
  auto o = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "The main job: Fashion-MNIST with flynn's defaults and the paper's setting, beside exact kNN");
  add_fashion_dir_option(cmd, o->fashion_dir, "Folder with the Fashion-MNIST IDX files", true);
  add_out_option(cmd, o->out, "Where the trained models are written (default flynn-demo)");
  cmd->add_option("--knn-k", o->knn_k, "k of the kNN baseline (default 10)");
  cmd->add_flag("--skip-knn", o->skip_knn, "Do not run the kNN baseline");
  // Acted on before parsing (experiments::prepare_bench scans argv: the BLAS kernels are chosen when the
  // library loads), so the flag stores nothing; it is declared for --help and validation.
  cmd->add_flag("--keep-blas-core")
                ->description("Do not set OPENBLAS_CORETYPE / OMP_WAIT_POLICY for FAISS (see flynn bench)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_demo(*o); });
}

const RegisterCommand registered(5, add_demo_command);

}  // namespace

}  // namespace flynn::cli
