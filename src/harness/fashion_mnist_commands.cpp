#include "flynn/harness/fashion_mnist_commands.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/harness/fashion_mnist_demo.hpp"
#include "flynn/harness/file_path_benchmark.hpp"
#include "flynn/harness/peer_benchmark.hpp"
#include "flynn/harness/plot.hpp"
#include "flynn/eval/model_summary.hpp"
#include "flynn/harness/speed_benchmark.hpp"
#include "flynn/simd.hpp"
#include "flynn/io/atomic_file.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

namespace {

const char* const kFashionDirHelp = "Folder with the Fashion-MNIST IDX files";

// The train and test split, the test rows' labels in the training rows' class order.
std::pair<Dataset, Dataset> load_split(const std::string& dir) {
  std::pair<Dataset, Dataset> split{load_fashion_mnist(dir, false), load_fashion_mnist(dir, true)};
  split.second.relabel(split.first.classes);
  return split;
}

}  // namespace

const OptionTable<DemoRequest>& demo_fields() {
  using R = DemoRequest;
  static const OptionTable<R> fields = {
      {"--fashion-dir", kFashionDirHelp, &R::fashion_dir},
      {"--data-dir", "", &R::fashion_dir, {}, false, {}, {}, true},
      {"--out", "Where the trained models are written (default flynn-demo)", &R::out},
      {"--out-dir", "", &R::out, {}, false, {}, {}, true},
      {"--knn-k", "k of the kNN baseline (default 10)", &R::knn_k, {}, false, 1},
      {"--skip-knn", "Do not run the kNN baseline", &R::skip_knn},
      {"--keep-blas-core", "Do not set OPENBLAS_CORETYPE / OMP_WAIT_POLICY for FAISS (see flynn bench)",
       &R::keep_blas_core},
  };
  return fields;
}

Report run_demo_command(const DemoRequest& o, int threads,
                        const std::function<ProgressFn(std::string_view step)>& progress) {
  const auto [train, test] = load_split(o.fashion_dir);
  DemoOptions demo;
  demo.out_dir = o.out;
  demo.knn_k = o.knn_k;
  demo.knn = !o.skip_knn;
  demo.threads = threads;
  demo.progress = progress;
  const std::vector<DemoResult> results = run_demo(train, test, demo);
  return {{{"command", "demo"},
           {"data_dir", o.fashion_dir},
           {"train_rows", train.n_rows},
           {"test_rows", test.n_rows},
           {"features", train.n_features},
           {"threads", threads},
           {"results", to_json(results)}},
          fmt::format("Fashion-MNIST: {} training rows, {} test rows, {} features ({})\n\n", train.n_rows,
                      test.n_rows, train.n_features, o.fashion_dir) +
              to_text(results, o.out)};
}

const OptionTable<BenchRequest>& bench_fields() {
  using R = BenchRequest;
  static const OptionTable<R> fields = {
      {"--fashion-dir", kFashionDirHelp, &R::fashion_dir},
      {"--data-dir", "", &R::fashion_dir, {}, false, {}, {}, true},
      {"--repeats", "Timed repetitions of each FlyNN measurement (median reported)", &R::repeats, {}, false, 1, 1000},
      {"--knn-repeats", "Timed repetitions of FAISS (slow)", &R::knn_repeats, {}, false, 1, 100},
      {"--skip-knn-1t", "Do not time FAISS on one thread (saves ~10 s per repeat)", &R::skip_knn_1t},
      {"--smoke", "A few thousand rows, one repetition: checks the benchmark runs (CI)", &R::smoke},
      {"--keep-blas-core", "Do not set OPENBLAS_CORETYPE (by default SkylakeX on AVX-512, Haswell on AVX2)",
       &R::keep_blas_core},
      {"--peers",
       "Instead: FlyNN at several settings beside FAISS exact, IVF, HNSW and hnswlib (build, prediction, "
       "accuracy, size at 1 and all threads; Pareto plot under --out)",
       &R::peers},
      {"--peer-repeats", "Timed repetitions of each --peers prediction (median reported)", &R::peer_repeats, {},
       false, 1, 100},
      {"--out", "Where --peers writes peers.csv, peers.json and pareto.png (default flynn-bench-peers)", &R::out},
      {"--file-path",
       "Instead: flynn train's path on the IDX file against in-process training on the same uint8 rows "
       "(defaults and paper setting, 1 and all threads)",
       &R::file_path},
      {"--file-repeats", "Alternated runs of each --file-path measurement (the lowest is compared)",
       &R::file_repeats, {}, false, 1, 100},
      {"--simd",
       "Run on this SIMD target as if the CPU had no better one (e.g. avx2 on an AVX-512 machine; "
       "as FLYNN_SIMD_TARGET)",
       &R::simd},
  };
  return fields;
}

namespace {

Report run_peers(const BenchRequest& o, int threads, const std::function<void(const std::string&)>& log) {
  auto [train, test] = load_split(o.fashion_dir);
  SpeedBenchmarkOptions ignored;
  if (o.smoke) shrink_to_smoke(train, test, ignored);
  PeerBenchmarkOptions po;
  po.threads = threads;
  po.repeats = o.peer_repeats;
  po.smoke = o.smoke;
  po.log = log;
  const PeerBenchmarkReport r = run_peer_benchmark(train, test, po);
  Report out{to_json(r), to_text(r)};
  out.json["command"] = "bench --peers";
  out.json["smoke"] = o.smoke;
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  out.json["openblas_coretype"] = coretype ? coretype : "";
  std::filesystem::create_directories(o.out);
  const std::filesystem::path dir(o.out);
  io::write_file_atomic((dir / "peers.csv").string(), to_csv(r));
  io::write_file_atomic((dir / "peers.json").string(), out.json.dump(2) + "\n");
  const std::string png = (dir / "pareto.png").string();
  try {
    run_plot_script("peers_pareto.py", {(dir / "peers.csv").string(), png, std::to_string(r.threads_all)});
    out.json["plot"] = png;
    out.text += "\nPareto plot: " + png + "\n";
  } catch (const Error& e) {
    out.json["plot_error"] = e.what();
    out.text += std::string("\nThe Pareto plot could not be drawn: ") + e.what() + "\n";
  }
  out.text += "Files: " + (dir / "peers.csv").string() + ", " + (dir / "peers.json").string() + "\n";
  return out;
}

Report run_file_path(const BenchRequest& o, int threads, const std::function<void(const std::string&)>& log) {
  FilePathBenchmarkOptions fo;
  fo.threads = threads;
  fo.repeats = o.file_repeats;
  fo.log = log;
  std::string images = fashion_mnist_images_path(o.fashion_dir, false);
  std::optional<std::filesystem::path> scratch;
  if (o.smoke) {
    // The first 3000 training rows as an IDX pair of their own: the same code path, quickly.
    scratch = std::filesystem::temp_directory_path() / fmt::format("flynn-bench-smoke-{}", ::getpid());
    images = write_idx_pair(load_fashion_mnist(o.fashion_dir, false), 3000, scratch->string());
    fo.repeats = 1;
  }
  FilePathBenchmarkReport r;
  try {
    r = run_file_path_benchmark(images, fo);
  } catch (...) {
    if (scratch) std::filesystem::remove_all(*scratch);
    throw;
  }
  if (scratch) std::filesystem::remove_all(*scratch);
  Report out{to_json(r), to_text(r)};
  out.json["command"] = "bench --file-path";
  out.json["smoke"] = o.smoke;
  return out;
}

}  // namespace

namespace {
Report run_chosen_bench(const BenchRequest& o, int threads, const std::function<void(const std::string&)>& log);
}  // namespace

// The benchmark `o` asks for, then which SIMD target and kernels ran it.
Report run_bench_command(const BenchRequest& o, int threads, const std::function<void(const std::string&)>& log) {
  if (o.peers && o.file_path) throw Error("--peers and --file-path are separate benchmarks: give one");
  if (!o.simd.empty()) simd::pin_target(o.simd);
  Report r = run_chosen_bench(o, threads, log);
  const Report kernels = eval::machine_kernels_report();
  r.json["kernels"] = kernels.json;
  r.text += "\n" + kernels.text;
  return r;
}

namespace {

Report run_chosen_bench(const BenchRequest& o, int threads, const std::function<void(const std::string&)>& log) {
  if (o.peers) return run_peers(o, threads, log);
  if (o.file_path) return run_file_path(o, threads, log);
  auto [train, test] = load_split(o.fashion_dir);
  SpeedBenchmarkOptions so;
  so.threads = threads;
  so.repeats = o.repeats;
  so.knn_repeats = o.knn_repeats;
  so.single_thread_knn = !o.skip_knn_1t;
  if (o.smoke) shrink_to_smoke(train, test, so);
  const FlyConfig config =
      fashion_mnist_paper_params().resolve(static_cast<std::uint32_t>(train.n_features), train.classes.size());
  const SpeedBenchmarkReport r = run_speed_benchmark(train, test, config, so);
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  Report out{to_json(r), to_text(r, so, coretype)};
  out.json["command"] = "bench";
  out.json["smoke"] = o.smoke;
  out.json["openblas_coretype"] = coretype ? coretype : "";
  if (is_full_split(r)) {
    out.json["train_speedup_vs_reference_1t"] = kReferenceTrainSeconds / r.train_1t.median;
    out.json["train_speedup_vs_reference_all"] = kReferenceTrainSeconds / r.train_all.median;
    out.json["predict_speedup_vs_reference_1t"] = kReferencePredictSeconds / r.predict_1t.median;
  }
  return out;
}

}  // namespace

}  // namespace flynn::harness
