#pragma once
// The main job behind `flynn demo`: Fashion-MNIST with flynn's defaults and the paper's
// setting, each trained, saved and timed, next to exact kNN (FAISS) on the same split.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/dataset.hpp"
#include "flynn/progress.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

struct DemoOptions {
  std::string out_dir;       ///< where the models are written (fashion-mnist-SETTING.flynn)
  std::uint32_t knn_k = 10;  ///< k of the kNN baseline
  bool knn = true;           ///< run the kNN baseline
  int threads = 0;           ///< 0 = all cores
  /// Called as each timed step begins ("training default", "predicting paper", ...),
  /// returning its progress callback (may be empty), and with "" as it ends.
  std::function<ProgressFn(std::string_view step)> progress;
};

/// One method's line of the demo table.
struct DemoResult {
  std::string method;   ///< "FlyNN" or "kNN (FAISS exact)"
  std::string setting;  ///< FlyNN: "default (CONFIG)" / "paper (CONFIG)"; kNN: k, scaling, BLAS
  double accuracy = 0, train_seconds = 0, predict_seconds = 0;
  std::uint64_t size_bytes = 0;  ///< model file; kNN: its float32 index of the training rows
};

/// Trains, saves and times both FlyNN settings, then (options.knn) the kNN baseline, on
/// `train` and `test` (labels matched to train's). Throws flynn::Error on a model that
/// cannot be written.
std::vector<DemoResult> run_demo(const Dataset& train, const Dataset& test, const DemoOptions& options);

/// The results as `flynn demo --json` lists them.
nlohmann::json to_json(const std::vector<DemoResult>& results);

/// The table, settings and where the models went, as `flynn demo` prints them after its
/// first line.
std::string to_text(const std::vector<DemoResult>& results, const std::string& out_dir);

}  // namespace flynn::harness
