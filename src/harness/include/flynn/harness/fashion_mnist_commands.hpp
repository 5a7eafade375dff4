#pragma once
// `flynn demo` and `flynn bench` as harness operations on the Fashion-MNIST split: their
// settings as tables (the CLI's flags are made from them) and one call each that loads the
// data, runs and reports.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "flynn/eval/report.hpp"
#include "flynn/harness/fashion_mnist.hpp"
#include "flynn/option_table.hpp"
#include "flynn/progress.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// `flynn demo` as given.
struct DemoRequest {
  std::string fashion_dir = kDefaultFashionMnistDir;
  std::string out = "flynn-demo";
  std::uint32_t knn_k = 10;
  bool skip_knn = false;
  /// Acted on before parsing (prepare_bench, blas_env.hpp, scans argv: the BLAS kernels are
  /// chosen when the library loads); declared for --help and validation.
  bool keep_blas_core = false;
};

/// --fashion-dir (hidden alias --data-dir), --out (hidden --out-dir), --knn-k, --skip-knn,
/// --keep-blas-core.
const OptionTable<DemoRequest>& demo_fields();

/// Trains flynn's defaults and the paper's setting on the 60000 training rows, predicts the
/// 10000 test rows beside exact kNN, writes the models under request.out and reports
/// {"command": "demo", data_dir, rows, features, threads, results} and the table as text.
/// `progress` is called as each timed step begins (and with "" as it ends).
Report run_demo_command(const DemoRequest& request, int threads,
                        const std::function<ProgressFn(std::string_view step)>& progress);

/// `flynn bench` as given.
struct BenchRequest {
  std::string fashion_dir = kDefaultFashionMnistDir;
  bool smoke = false;
  std::uint32_t repeats = 5;
  std::uint32_t knn_repeats = 1;
  bool skip_knn_1t = false;
  bool keep_blas_core = false;  ///< as DemoRequest::keep_blas_core
  /// --peers: FlyNN at several settings beside FAISS exact, IVF, HNSW and hnswlib
  /// (peer_benchmark.hpp), instead of the speed benchmark.
  bool peers = false;
  std::uint32_t peer_repeats = 1;     ///< timed repetitions of each --peers prediction
  std::string out = "flynn-bench-peers";  ///< --peers: where peers.csv/json and pareto.png go
  /// --file-path: `flynn train`'s path against in-process training (file_path_benchmark.hpp).
  bool file_path = false;
  std::uint32_t file_repeats = 2;     ///< alternated runs of each path
  /// --simd: the SIMD target to pin for the whole run (simd::pin_target, e.g. "avx2"); ""
  /// keeps the best one (or FLYNN_SIMD_TARGET's).
  std::string simd;
};

/// --fashion-dir (hidden alias --data-dir), --repeats, --knn-repeats, --skip-knn-1t,
/// --smoke, --keep-blas-core, --peers, --peer-repeats, --out, --file-path, --file-repeats,
/// --simd.
const OptionTable<BenchRequest>& bench_fields();

/// The speed benchmark (speed_benchmark.hpp) with the paper's setting, peers in the same
/// run: {"command": "bench", smoke, openblas_coretype, the measurements, speed-ups against
/// the reference on the full split} and its text. With --peers the peer comparison
/// instead (its files written under request.out, the Pareto plot drawn when matplotlib is
/// there), with --file-path the file-vs-in-process comparison. Every report says which SIMD
/// target and kernels ran (eval::machine_kernels_report). `log` hears a line as each
/// step of those begins (may be empty).
Report run_bench_command(const BenchRequest& request, int threads,
                         const std::function<void(const std::string&)>& log = {});

}  // namespace flynn::harness
