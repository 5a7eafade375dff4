// flynn bench: the speed benchmark on Fashion-MNIST, peers measured in the same run.
#include <cstdlib>
#include <filesystem>
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

namespace fs = std::filesystem;

// Timings of the Python reference and scikit-learn measured on one core of this machine
// type (issue 5); flynn does not run them, it only states the ratio.
constexpr double kReferenceTrainSeconds = 1070.0;
constexpr double kReferencePredictSeconds = 172.0;
constexpr double kSklearnKnnPredictSeconds = 63.0;

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
  if (o.smoke) {  // CI: a few thousand rows, one repetition; checks the code path, not speed
    std::vector<std::size_t> tr(3000), te(500);
    for (std::size_t i = 0; i < tr.size(); ++i) tr[i] = i;
    for (std::size_t i = 0; i < te.size(); ++i) te[i] = i;
    train = train.subset(tr);
    test = test.subset(te);
    so.repeats = 1;
    so.knn_repeats = 1;
    so.peak_seconds = 0.05;
  }
  const HyperParams paper = experiments::fashion_mnist_paper_params();
  const FlyConfig config =
      paper.resolve(static_cast<std::uint32_t>(train.n_features), train.classes.size());
  const experiments::SpeedBenchmarkReport r = experiments::run_speed_benchmark(train, test, config, so);
  const bool full = train.n_rows == 60000 && test.n_rows == 10000;
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");

  nlohmann::json j = experiments::to_json(r);
  j["command"] = "bench";
  j["smoke"] = o.smoke;
  j["openblas_coretype"] = coretype ? coretype : "";
  if (full) {
    j["train_speedup_vs_reference_1t"] = kReferenceTrainSeconds / r.train_1t.median;
    j["train_speedup_vs_reference_all"] = kReferenceTrainSeconds / r.train_all.median;
    j["predict_speedup_vs_reference_1t"] = kReferencePredictSeconds / r.predict_1t.median;
  }
  if (o.common.json) {
    print_json(j);
    return;
  }
  auto ms = [](const experiments::Timing& t) { return fmt::format("{:8.3f} s", t.median); };
  std::cout << fmt::format("Fashion-MNIST {} train / {} test rows, d = {}; {}\n", r.train_rows,
                           r.test_rows, r.features, r.config.describe())
            << fmt::format("SIMD target {}, {} threads for 'all'; FAISS BLAS: {}{}\n", r.simd_target,
                           r.threads_all, r.blas,
                           coretype ? fmt::format(" [OPENBLAS_CORETYPE={}]", coretype) : "")
            << fmt::format("medians of {} runs (FAISS: {})\n\n", so.repeats, so.knn_repeats);
  std::cout << fmt::format("{:<44} {:>12} {:>12}\n", "", "1 thread", fmt::format("{} threads", r.threads_all))
            << fmt::format("{:<44} {:>12} {:>12}\n", "FlyNN training", ms(r.train_1t), ms(r.train_all))
            << fmt::format("{:<44} {:>12} {:>12}\n", "FlyNN prediction", ms(r.predict_1t), ms(r.predict_all))
            << fmt::format("{:<44} {:>12} {:>12}\n", "FAISS exact kNN prediction (k=" + std::to_string(so.knn_k) + ")",
                           r.knn_1t_measured ? ms(r.knn_1t) : std::string("-"), ms(r.knn_all))
            << fmt::format("{:<44} {:>12} {:>11.1f}x\n", "prediction speed-up over FAISS",
                           r.knn_1t_measured ? fmt::format("{:.1f}x", r.knn_1t.median / r.predict_1t.median) : "-",
                           r.knn_all.median / r.predict_all.median)
            << "\n"
            << fmt::format("accuracy: FlyNN {:.4f}, kNN {:.4f}\n", r.flynn_accuracy, r.knn_accuracy)
            << fmt::format("FlyHash kernel: {:.3g} {} additions in {:.3f} s on one core = {:.1f} G/s; "
                           "peak streaming-add rate {:.1f} G/s; {:.0f}% of peak\n",
                           r.additions, r.lane, r.hash_1t.median, r.hash_add_rate / 1e9,
                           r.peak_add_rate / 1e9, 100.0 * r.hash_add_rate / r.peak_add_rate)
            << fmt::format("model: {} on disk; training rows {} as uint8 ({:.0f}x larger), {} as float32 ({:.0f}x)\n",
                           human_bytes(r.model_bytes), human_bytes(r.train_bytes_uint8),
                           double(r.train_bytes_uint8) / r.model_bytes, human_bytes(r.train_bytes_float32),
                           double(r.train_bytes_float32) / r.model_bytes);
  if (full)
    std::cout << fmt::format(
        "vs the Python reference on one core (training {:.0f} s, prediction {:.0f} s; scikit-learn kNN "
        "{:.0f} s): training {:.0f}x faster on 1 thread, {:.0f}x on {}; prediction {:.0f}x faster on 1 thread\n",
        kReferenceTrainSeconds, kReferencePredictSeconds, kSklearnKnnPredictSeconds,
        kReferenceTrainSeconds / r.train_1t.median, kReferenceTrainSeconds / r.train_all.median,
        r.threads_all, kReferencePredictSeconds / r.predict_1t.median);
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
  // Acted on before parsing (prepare_bench scans argv: the BLAS kernels are chosen when the
  // library loads), so the flag stores nothing; it is declared for --help and validation.
  cmd->add_flag("--keep-blas-core")
                ->description("Do not set OPENBLAS_CORETYPE (by default SkylakeX on AVX-512, Haswell on AVX2)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_bench(*o); });
}

const RegisterCommand registered(50, add_bench_command);

}  // namespace

}  // namespace flynn::cli
