#pragma once
// Small helpers shared by the studies and the CLI: summary statistics, the machine a
// report states (cores, load, process CPU time: the one home of core counting and of the
// process's CPU time in the evaluation layer; a thread's CPU time is
// flynn/detail/cpu_time.hpp's), and formatting of sizes and configurations.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flynn/config.hpp"
#include "flynn/dataset.hpp"

namespace flynn::eval {

/// Mean and sample standard deviation (sd = 0 for fewer than two values).
struct MeanSd {
  double mean = 0;
  double sd = 0;
  std::size_t n = 0;
};
MeanSd mean_sd(const std::vector<double>& values);

/// "2 cores (Intel(R) Xeon(R) …)": logical CPUs this process may use and the CPU model.
std::string machine_description();
/// Logical CPUs this process may use (sched_getaffinity, else hardware_concurrency).
int usable_cores();
/// The 1-minute load average (/proc/loadavg), or -1 when unavailable: timing reports state
/// it, since other processes competing for the cores slow the parties down.
double load_average();
/// CPU seconds (user + system) this process has used so far, all threads together.
double cpu_seconds();

/// A study invocation's run line (its report states it): started on construction, stop()
/// sets the wall and CPU seconds since and the load average then. Every study driver
/// (plan, run the units, summarize, write the artifacts) times its units' run with one.
class StudyClock {
 public:
  StudyClock();
  /// Seconds of wall time since construction.
  double elapsed() const;
  void stop();
  double load_before = 0;  ///< load_average() at construction
  double seconds = 0, cpu_seconds = 0, load_after = 0;  ///< set by stop()

 private:
  std::chrono::steady_clock::time_point start_;
  double cpu_before_ = 0;
};

/// "12.3 MiB" style sizes (binary units).
std::string human_bytes(std::uint64_t bytes);

/// A configuration as a JSON object, one key per row of the table of settings
/// (settings_table.hpp, config_fields): d, m, s, rho, gamma, seed, preprocess, variant.
nlohmann::json config_json(const FlyConfig& config);

}  // namespace flynn::eval
