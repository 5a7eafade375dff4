// flynn bench: the speed benchmark on Fashion-MNIST, peers measured in the same run.
#include <cstdlib>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/harness/speed_benchmark.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::cli {

namespace {

struct BenchOptions {
  std::string fashion_dir = experiments::kDefaultFashionMnistDir;
  bool smoke = false;
  std::uint32_t repeats = 5;
  std::uint32_t knn_repeats = 1;
  bool skip_knn_1t = false;
  CommonOptions common;
};

void run_bench(const BenchOptions& o) {
  Dataset train = experiments::load_fashion_mnist(o.fashion_dir, false);
  Dataset test = experiments::load_fashion_mnist(o.fashion_dir, true);
  test.relabel(train.classes);
  experiments::SpeedBenchmarkOptions so;
  so.threads = o.common.threads;
  so.repeats = o.repeats;
  so.knn_repeats = o.knn_repeats;
  so.single_thread_knn = !o.skip_knn_1t;
  if (o.smoke) experiments::shrink_to_smoke(train, test, so);
  const HyperParams paper = experiments::fashion_mnist_paper_params();
  const FlyConfig config =
      paper.resolve(static_cast<std::uint32_t>(train.n_features), train.classes.size());
  const experiments::SpeedBenchmarkReport r = experiments::run_speed_benchmark(train, test, config, so);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");

  nlohmann::json j = experiments::to_json(r);
  j["command"] = "bench";
  j["smoke"] = o.smoke;
  j["openblas_coretype"] = coretype ? coretype : "";
  if (experiments::is_full_split(r)) {
    j["train_speedup_vs_reference_1t"] = experiments::kReferenceTrainSeconds / r.train_1t.median;
    j["train_speedup_vs_reference_all"] = experiments::kReferenceTrainSeconds / r.train_all.median;
    j["predict_speedup_vs_reference_1t"] = experiments::kReferencePredictSeconds / r.predict_1t.median;
  }
  if (o.common.json) {
    print_json(j);
    return;
  }
  std::cout << experiments::to_text(r, so, coretype);
}

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Speed benchmark on Fashion-MNIST: FlyNN vs FAISS exact kNN in one run, kernel vs peak add rate");
  add_fashion_dir_option(cmd, o->fashion_dir, "Folder with the Fashion-MNIST IDX files", true);
  cmd->add_option("--repeats", o->repeats, "Timed repetitions of each FlyNN measurement (median reported)")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--knn-repeats", o->knn_repeats, "Timed repetitions of FAISS (slow)")->check(CLI::Range(1u, 100u));
  cmd->add_flag("--skip-knn-1t", o->skip_knn_1t, "Do not time FAISS on one thread (saves ~10 s per repeat)");
  cmd->add_flag("--smoke", o->smoke, "A few thousand rows, one repetition: checks the benchmark runs (CI)");
  // Acted on before parsing (experiments::prepare_bench scans argv: the BLAS kernels are chosen when the
  // library loads), so the flag stores nothing; it is declared for --help and validation.
  cmd->add_flag("--keep-blas-core")
                ->description("Do not set OPENBLAS_CORETYPE (by default SkylakeX on AVX-512, Haswell on AVX2)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_bench(*o); });
}

const RegisterCommand registered(50, add_bench_command);

}  // namespace

}  // namespace flynn::cli
