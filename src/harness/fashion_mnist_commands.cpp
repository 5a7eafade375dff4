#include "flynn/harness/fashion_mnist_commands.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "flynn/harness/fashion_mnist_demo.hpp"
#include "flynn/harness/speed_benchmark.hpp"

namespace flynn::experiments {

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
  };
  return fields;
}

Report run_bench_command(const BenchRequest& o, int threads) {
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

}  // namespace flynn::experiments
