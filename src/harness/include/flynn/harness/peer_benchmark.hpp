#pragma once
// `flynn bench --peers`: FlyNN at several settings beside the nearest-neighbour indexes a
// user would otherwise reach for (FAISS exact, IVF and HNSW; hnswlib), all in one process
// on the same Fashion-MNIST split, each with its build (training) time, prediction time
// and accuracy at one thread and all threads, and its size; then the Pareto front of
// accuracy against one-thread prediction time and, per accuracy level, the fastest peer.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

/// One FlyNN point of the comparison: a name and the hyper-parameters it stands for.
struct FlySetting {
  std::string name;  ///< "defaults", "paper", "defaults s=32" …
  HyperParams params;
};

/// The FlyNN settings `flynn bench --peers` measures: flynn's defaults, the paper's
/// setting, and the defaults with less work per query (s = 32 and 16; m = 32768 with
/// s = 32, m = 16384 with s = 16).
const std::vector<FlySetting>& peer_fly_settings();

/// One nearest-neighbour index of the comparison and the search breadths it is timed at.
struct PeerSpec {
  std::string library;           ///< "faiss" (factory string) or "hnswlib"
  std::string factory;           ///< FAISS: "Flat", "IVF1024,Flat", "HNSW32"
  std::uint32_t m_links = 16;    ///< hnswlib: M
  std::uint32_t ef_construction = 200;  ///< hnswlib: efConstruction
  std::vector<std::uint32_t> breadths;  ///< nprobe / efSearch / ef; {0} for exact search
};

/// The indexes of `flynn bench --peers`: FAISS exact (IndexFlatL2), IVF1024,Flat at nprobe
/// 1, 4, 16, HNSW32 at efSearch 16, 32, 64, and hnswlib M=16 at ef 10, 20, 40 (when the
/// build has it). `smoke`: the same kinds sized for a few thousand rows (IVF32).
std::vector<PeerSpec> peer_specs(bool smoke);

struct PeerBenchmarkOptions {
  int threads = 0;              ///< "all threads" (0 = all cores)
  std::uint32_t knn_k = 10;     ///< k of the neighbour vote
  std::uint32_t repeats = 1;    ///< timed repetitions of each prediction (median)
  bool smoke = false;           ///< peer_specs(true), defaults and paper only
  /// Called with a line as each step begins ("building FAISS HNSW32 on 1 thread"), for a
  /// progress log on stderr; may be empty.
  std::function<void(const std::string&)> log;
};

/// One line of the comparison: a FlyNN setting, or an index at one search breadth.
struct PeerResult {
  std::string method;       ///< "FlyNN", "FAISS exact", "FAISS IVF1024,Flat", "hnswlib M=16 efC=200" …
  std::string setting;      ///< FlyNN: the setting's name and config; indexes: "nprobe=4", "ef=20", ""
  bool flynn = false;
  double build_1t = 0, build_all = 0;      ///< training / index build, seconds
  double predict_1t = 0, predict_all = 0;  ///< the test rows (search + vote), seconds (median)
  /// CPU seconds of the one-thread build and prediction (median): on a busy machine, what
  /// the wall times would be on an idle one.
  double build_cpu_1t = 0, predict_cpu_1t = 0;
  double accuracy = 0;                     ///< with the one-thread build
  double accuracy_all = 0;                 ///< with the all-threads build (HNSW graphs differ)
  std::uint64_t size_bytes = 0;            ///< model file / index as its library writes it
  bool pareto = false;  ///< no other line is at least as accurate and at least as fast (1 thread)
};

/// At one accuracy level: the fastest index and the fastest FlyNN setting reaching it.
struct AccuracyLevel {
  double level = 0;
  int fastest_peer = -1;   ///< index into the results; −1: no index reaches the level
  int fastest_flynn = -1;  ///< −1: no FlyNN setting reaches it
};

struct PeerBenchmarkReport {
  std::size_t train_rows = 0, test_rows = 0, features = 0;
  int threads_all = 1;
  std::string simd_target, blas, machine;
  std::uint32_t knn_k = 10, repeats = 1;
  std::vector<PeerResult> results;
  std::vector<AccuracyLevel> levels;
};

/// Runs the comparison on `train` / `test` (labels matched): the indexes on L2-normalised
/// rows, FlyNN on the raw rows, both at one thread and options.threads.
PeerBenchmarkReport run_peer_benchmark(const Dataset& train, const Dataset& test,
                                       const PeerBenchmarkOptions& options);

/// Marks the Pareto front (PeerResult::pareto) of accuracy against one-thread prediction
/// time, and fills the report's accuracy levels (0.70, 0.75, 0.80 … 0.86 and each FlyNN
/// setting's own accuracy) with the fastest index and FlyNN setting reaching each.
void mark_pareto_and_levels(PeerBenchmarkReport& report);

/// The report as JSON ({"results": [...], "levels": [...], ...}).
nlohmann::json to_json(const PeerBenchmarkReport& report);
/// The results as CSV (one line per result; what the Pareto plot reads).
std::string to_csv(const PeerBenchmarkReport& report);
/// The report as `flynn bench --peers` prints it: the table (Markdown), the Pareto front
/// and the fastest peer at each accuracy level.
std::string to_text(const PeerBenchmarkReport& report);

}  // namespace flynn::harness
