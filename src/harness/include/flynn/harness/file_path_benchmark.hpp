#pragma once
// `flynn bench --file-path`: `flynn train`'s path (io::train_from_file on the IDX file)
// against in-process training of the same model on the same pixels held as a uint8 array
// (FlyNN::fit on a uint8 DataView, what the Python estimator does with a NumPy array),
// alternated, at one thread and all threads, for flynn's defaults and the paper's setting;
// with the kernel each path's rows take and whether the two models are byte-identical.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/config.hpp"
#include "flynn/harness/speed_benchmark.hpp"
#include "flynn/harness/layers.hpp"

namespace flynn::harness {

struct FilePathBenchmarkOptions {
  int threads = 0;             ///< "all threads" (0 = all cores)
  std::uint32_t repeats = 2;   ///< alternated runs of each path (the minimum is compared)
  /// Called with a line as each step begins; may be empty.
  std::function<void(const std::string&)> log;
};

/// One setting at one thread count.
struct FilePathResult {
  std::string setting;  ///< "defaults" or "paper"
  FlyConfig config;
  int threads = 1;
  Timing file_load;     ///< train_from_file's reading (load_seconds)
  Timing file_train;    ///< its training (train_seconds: making the model, then fitting)
  Timing in_process;    ///< making the model and FlyNN::fit on the uint8 rows
  /// CPU seconds (all threads) of the whole file path (reading and training) and of the
  /// in-process training: steadier than wall time on a busy machine.
  Timing file_cpu, in_process_cpu;
  std::string file_row_elements, file_row_path;  ///< what the file's rows reach the kernels as
  std::string in_process_row_path;               ///< the kernel the in-process rows take
  bool identical = false;  ///< the two models' files are byte-identical
};

struct FilePathBenchmarkReport {
  std::string images_path;  ///< the IDX file trained from (its labels file beside it)
  std::size_t rows = 0, features = 0;
  std::vector<FilePathResult> results;
};

/// Runs both paths on the IDX images file at `images_path` (labels found as `flynn train`
/// finds them): per setting (defaults, paper) and thread count (1, options.threads), the
/// file path and the in-process fit alternately, options.repeats times each.
FilePathBenchmarkReport run_file_path_benchmark(const std::string& images_path,
                                                const FilePathBenchmarkOptions& options);

/// Writes `rows` rows of Fashion-MNIST-shaped pixels (the first rows of `data`, values
/// 0..255, integer class names) as an uncompressed IDX images file and labels file under
/// `dir`, named as the MNIST convention (so the labels are found beside the images);
/// returns the images file's path. For `flynn bench --file-path --smoke`.
std::string write_idx_pair(const Dataset& data, std::size_t rows, const std::string& dir);

nlohmann::json to_json(const FilePathBenchmarkReport& report);
/// The table `flynn bench --file-path` prints: per setting and threads, the file path's
/// reading and training, the in-process fit, their ratio, the kernels and identity.
std::string to_text(const FilePathBenchmarkReport& report);

}  // namespace flynn::harness
