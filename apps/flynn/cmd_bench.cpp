// flynn bench: the speed benchmark on Fashion-MNIST, peers measured in the same run.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "flynn/error.hpp"
#include "flynn/experiments/fashion_mnist.hpp"
#include "flynn/experiments/speed_benchmark.hpp"
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
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  bool smoke = false;
  bool keep_blas_core = false;
  std::uint32_t repeats = 5;
  std::uint32_t knn_repeats = 1;
  bool skip_knn_1t = false;
  CommonOptions common;
};

// OpenBLAS 0.3.21 picks its kernels when the library loads, and does not recognise recent
// CPUs. The benchmark alone selects this CPU's family through OPENBLAS_CORETYPE, and passive
// OpenMP waiting, both read at load time, so they must be set before the process starts:
// re-exec once. An inherited OPENBLAS_CORETYPE is replaced (with a note) because a wrong
// family silently slows FAISS down and flatters FlyNN (measured on an AVX-512 machine with a
// preset Haswell: 4.6 s instead of 2.6 s); --keep-blas-core keeps the environment as it is.
void select_openblas_core(char** argv) {
  if (std::getenv("FLYNN_BENCH_REEXEC")) return;
  const char* core = nullptr;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
    core = "SkylakeX";
  else if (__builtin_cpu_supports("avx2"))
    core = "Haswell";
  const char* inherited = std::getenv("OPENBLAS_CORETYPE");
  const bool passive_set = std::getenv("OMP_WAIT_POLICY") != nullptr;
  if ((!core || (inherited && std::string(inherited) == core)) && passive_set) return;
  if (core) {
    if (inherited && std::string(inherited) != core)
      fmt::print(stderr, "flynn: OPENBLAS_CORETYPE={} from the environment replaced by {}, this CPU's "
                 "family (--keep-blas-core keeps it)\n", inherited, core);
    ::setenv("OPENBLAS_CORETYPE", core, 1);
  }
  // FAISS's OpenMP threads spin while OpenBLAS's threads compute; on a machine with few
  // cores the spinning steals them (measured: 4.9 s instead of 2.6 s on 2 cores).
  ::setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  ::setenv("FLYNN_BENCH_REEXEC", "1", 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: then run with what we have
}

nlohmann::json timing_json(const experiments::Timing& t) {
  return {{"median", t.median}, {"min", t.min}, {"max", t.max}, {"runs", t.runs}};
}

void run_bench(const BenchOptions& o) {
  Dataset train = experiments::load_fashion_mnist(o.data_dir, false);
  Dataset test = experiments::load_fashion_mnist(o.data_dir, true);
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
  HyperParams paper;  // the paper's Fashion-MNIST setting (Table 5)
  paper.expansion_factor = 138;
  paper.connection_sparsity = 0.105;
  paper.wta_nnz = 8;
  paper.gamma = 0.8;
  paper.variant = Variant{};  // the paper's method, whatever the defaults
  const FlyConfig config =
      paper.resolve(static_cast<std::uint32_t>(train.n_features), train.classes.size());
  const experiments::SpeedBenchmarkReport r = experiments::run_speed_benchmark(train, test, config, so);
  const bool full = train.n_rows == 60000 && test.n_rows == 10000;
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");

  nlohmann::json j = {
      {"command", "bench"},
      {"smoke", o.smoke},
      {"train_rows", r.train_rows},
      {"test_rows", r.test_rows},
      {"features", r.features},
      {"config", config_json(r.config)},
      {"simd_target", r.simd_target},
      {"threads_all", r.threads_all},
      {"blas", r.blas},
      {"openblas_coretype", coretype ? coretype : ""},
      {"flynn_train_seconds_1t", timing_json(r.train_1t)},
      {"flynn_train_seconds_all", timing_json(r.train_all)},
      {"flynn_hash_seconds_1t", timing_json(r.hash_1t)},
      {"flynn_predict_seconds_1t", timing_json(r.predict_1t)},
      {"flynn_predict_seconds_all", timing_json(r.predict_all)},
      {"flynn_accuracy", r.flynn_accuracy},
      {"knn_predict_seconds_all", timing_json(r.knn_all)},
      {"knn_accuracy", r.knn_accuracy},
      {"predict_speedup_vs_faiss_all", r.knn_all.median / r.predict_all.median},
      {"additions", r.additions},
      {"hash_add_rate", r.hash_add_rate},
      {"peak_add_rate", r.peak_add_rate},
      {"peak_fraction", r.hash_add_rate / r.peak_add_rate},
      {"lane", r.lane},
      {"model_bytes", r.model_bytes},
      {"train_bytes_uint8", r.train_bytes_uint8},
      {"train_bytes_float32", r.train_bytes_float32},
      {"model_ratio_uint8", double(r.train_bytes_uint8) / r.model_bytes},
  };
  if (r.knn_1t_measured) {
    j["knn_predict_seconds_1t"] = timing_json(r.knn_1t);
    j["predict_speedup_vs_faiss_1t"] = r.knn_1t.median / r.predict_1t.median;
  }
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
  cmd->add_option("--data-dir", o->data_dir, "Folder with the Fashion-MNIST IDX files");
  cmd->add_option("--repeats", o->repeats, "Timed repetitions of each FlyNN measurement (median reported)")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--knn-repeats", o->knn_repeats, "Timed repetitions of FAISS (slow)")->check(CLI::Range(1u, 100u));
  cmd->add_flag("--skip-knn-1t", o->skip_knn_1t, "Do not time FAISS on one thread (saves ~10 s per repeat)");
  cmd->add_flag("--smoke", o->smoke, "A few thousand rows, one repetition: checks the benchmark runs (CI)");
  cmd->add_flag("--keep-blas-core", o->keep_blas_core,
                "Do not set OPENBLAS_CORETYPE (by default SkylakeX on AVX-512, Haswell on AVX2)");
  o->common.add_to(cmd);
  cmd->callback([o] { run_bench(*o); });
}

const RegisterCommand registered(50, add_bench_command);

}  // namespace

/// Called from main() before anything else: `flynn bench` and `flynn demo`, which time
/// FAISS, re-execute themselves with OPENBLAS_CORETYPE (and passive OpenMP waiting) set
/// unless --keep-blas-core is given.
void prepare_bench(int argc, char** argv) {
  if (argc < 2 || (std::string(argv[1]) != "bench" && std::string(argv[1]) != "demo")) return;
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--keep-blas-core" || std::string(argv[i]) == "--help" ||
        std::string(argv[i]) == "-h")
      return;
  select_openblas_core(argv);
}

}  // namespace flynn::cli
