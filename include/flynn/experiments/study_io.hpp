#pragma once
// Small helpers shared by the federated studies (`flynn federated privacy-study`,
// `flynn reproduce scaling`): data locations, summary statistics, CSV cells, and the
// machine description their reports state.
#include <cstddef>
#include <string>
#include <vector>

#include "flynn/dataset.hpp"

namespace flynn::experiments {

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

}  // namespace flynn::experiments
