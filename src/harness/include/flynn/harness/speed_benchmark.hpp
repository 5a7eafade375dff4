#pragma once
// The end-to-end speed benchmark behind `flynn bench`: FlyNN training and prediction on
// Fashion-MNIST next to FAISS exact kNN, measured in one process on the same rows and
// threads, plus the FlyHash kernel's share of the machine's peak addition rate.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/eval/study_io.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

struct SpeedBenchmarkOptions {
  std::uint32_t repeats = 5;          ///< timed repetitions per measurement (median reported)
  int threads = 0;                    ///< "all threads" (0 = all cores)
  std::uint32_t knn_k = 10;           ///< k of the FAISS baseline
  bool single_thread_knn = true;      ///< also time FAISS on one thread (slow: ~10 s/run)
  std::uint32_t knn_repeats = 1;      ///< FAISS repetitions (it is the slow part)
  double peak_seconds = 0.5;          ///< duration of the peak add-rate measurement
};

/// Median, minimum and maximum of repeated timings (seconds).
struct Timing {
  double median = 0, min = 0, max = 0;
  std::vector<double> runs;
};
Timing summarize_timing(std::vector<double> runs);

/// Wall and CPU seconds (this process, all threads) of one call: what every benchmark
/// here times a call with.
struct CallSeconds {
  double wall = 0, cpu = 0;
};
template <typename Fn>
CallSeconds time_call(Fn&& fn) {
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return {flynn::detail::seconds_since(t0), cpu_seconds() - cpu0};
}

struct SpeedBenchmarkReport {
  std::size_t train_rows = 0, test_rows = 0, features = 0;
  FlyConfig config;
  std::string simd_target;
  int threads_all = 1;
  std::string blas;

  Timing train_1t, train_all;       ///< FlyNN training (hashing + counting) of the train rows
  Timing hash_1t;                   ///< hashing alone, one thread (the kernel measurement)
  Timing predict_1t, predict_all;   ///< FlyNN prediction of the test rows
  double flynn_accuracy = 0;
  Timing knn_1t, knn_all;           ///< FAISS exact kNN search + vote of the test rows
  double knn_accuracy = 0;
  bool knn_1t_measured = false;

  double additions = 0;             ///< n·m·s additions of the training hash
  double hash_add_rate = 0;         ///< additions / hash_1t.median
  double peak_add_rate = 0;         ///< streaming-add roofline, same lane type, one core
  std::string lane;                 ///< the kernel the rows take ("uint8", "float", …)

  std::uint64_t model_bytes = 0;            ///< model file size
  std::uint64_t train_bytes_uint8 = 0;      ///< training rows as 8-bit pixels (IDX payload)
  std::uint64_t train_bytes_float32 = 0;    ///< training rows as float32 (what kNN indexes)
};

/// Runs every measurement on `train`/`test` with `config`. The FAISS runs use the same
/// L2-normalised rows and thread counts as FlyNN.
SpeedBenchmarkReport run_speed_benchmark(const Dataset& train, const Dataset& test,
                                         const FlyConfig& config,
                                         const SpeedBenchmarkOptions& options);

/// The report as JSON: sizes, configuration, SIMD target, BLAS, every timing (median, min,
/// max, runs), accuracies, the FAISS speed-ups, the kernel's add rate against the peak, and
/// the model and data sizes (what `flynn bench --json` prints, beside its own fields).
nlohmann::json to_json(const SpeedBenchmarkReport& report);

/// Timings of the Python reference and scikit-learn measured once on one core of the
/// benchmark's machine type (docs/guide/performance.md); flynn does not run them, it only
/// states the ratios, and only for the full 60000/10000 split.
inline constexpr double kReferenceTrainSeconds = 1070.0;
inline constexpr double kReferencePredictSeconds = 172.0;
inline constexpr double kSklearnKnnPredictSeconds = 63.0;

/// Whether the report is of the full Fashion-MNIST split (60000 train, 10000 test rows).
bool is_full_split(const SpeedBenchmarkReport& report);

/// `flynn bench --smoke` (CI): the first 3000 training and 500 test rows, one repetition,
/// a short peak measurement; checks the code path, not speed.
void shrink_to_smoke(Dataset& train, Dataset& test, SpeedBenchmarkOptions& options);

/// The report as `flynn bench` prints it: sizes, the configuration, SIMD target and BLAS
/// (with `coretype`, the OPENBLAS_CORETYPE in effect, when not null), the timing table, the
/// kernel's add rate against the peak, sizes, and the ratios to the reference (full split).
std::string to_text(const SpeedBenchmarkReport& report, const SpeedBenchmarkOptions& options,
                    const char* coretype);

}  // namespace flynn::harness
