#pragma once
// Shared helpers for the test suite: temporary directories, files, shell commands, the
// shared data folder, datasets. Running the CLI is cli_support.hpp's (CLI tests only).
#include <filesystem>
#include <string>
#include <vector>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"

namespace flynn::test {

/// A fresh directory under the system temp dir, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Writes `text` to `path` (binary, truncating).
void write_text(const std::string& path, const std::string& text);
/// Reads a whole file (binary).
std::string read_text(const std::string& path);

struct CommandResult {
  int exit_code = -1;   ///< the process' exit status; 128+signal when killed by one
  std::string out;      ///< stdout
  std::string err;      ///< stderr
};

/// Runs an arbitrary shell command line, capturing stdout and stderr.
CommandResult run_shell(const std::string& command_line);
/// A free TCP port on 127.0.0.1 (bound, then released), for processes that need a fixed
/// port up front (a kit names the coordinator's address).
int free_port();

/// The repository root (compile-time constant).
std::string source_dir();
/// ../shared/data/openml relative to the repository root, or FLYNN_OPENML_DIR when set.
/// Empty when it does not exist (tests that need it skip).
std::string openml_dir();
/// scikit-learn's Digits (Debian python3-sklearn), or empty when not installed.
std::string digits_csv();
/// /usr/share/datasets/fashion-mnist (Debian dataset-fashion-mnist), or empty.
std::string fashion_mnist_dir();

/// An in-memory dataset: rows and their label names (classes = sorted label set).
Dataset make_dataset(const std::vector<std::vector<float>>& rows,
                     const std::vector<std::string>& labels);
/// n rows of d standard normal values (row-major), seeded: the tests' generic float rows.
std::vector<float> normal_rows(std::size_t n, std::size_t d, std::uint64_t seed);
/// Random Gaussian blobs: `per_class` rows of each of `classes` classes in d dimensions,
/// class c centred at a random point; labels "c0", "c1", …; seeded.
Dataset blobs(std::size_t classes, std::size_t per_class, std::size_t d, std::uint64_t seed,
              double spread = 0.5);

/// FlyNN's exactness under `config` (gtest expectations): models of the rows split in two
/// (every third row from the second on in b), trained with the statistics of all rows and
/// merged, equal the model of all rows, file byte for byte; and that model after
/// forget(b) equals the model of a alone with those statistics.
void expect_exact_merge_and_forget(const FlyConfig& config, const Dataset& data);

}  // namespace flynn::test
