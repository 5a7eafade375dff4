#include "flynn/eval/study_io.hpp"

#include "flynn/detail/cpu_time.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/settings_table.hpp"

namespace flynn::eval {

namespace fs = std::filesystem;

MeanSd mean_sd(const std::vector<double>& v) {
  MeanSd r;
  r.n = v.size();
  if (v.empty()) return r;
  for (double x : v) r.mean += x;
  r.mean /= static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - r.mean) * (x - r.mean);
    r.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  return r;
}

int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

double load_average() {
  std::ifstream f("/proc/loadavg");
  double v = -1;
  if (!(f >> v)) return -1;
  return v;
}

double cpu_seconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

StudyClock::StudyClock() : start_(std::chrono::steady_clock::now()) {
  load_before = load_average();
  cpu_before_ = eval::cpu_seconds();
}

double StudyClock::elapsed() const {
  return detail::seconds_since(start_);
}

void StudyClock::stop() {
  seconds = elapsed();
  load_after = load_average();
  cpu_seconds = eval::cpu_seconds() - cpu_before_;
}

std::string human_bytes(std::uint64_t b) {
  if (b < 1024) return fmt::format("{} B", b);
  if (b < (1u << 20)) return fmt::format("{:.1f} KiB", b / 1024.0);
  if (b < (1u << 30)) return fmt::format("{:.1f} MiB", b / double(1u << 20));
  return fmt::format("{:.2f} GiB", b / double(1u << 30));
}

nlohmann::json config_json(const FlyConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const ConfigField& f : config_fields())
    std::visit([&](const auto& value) { j[f.key] = value; }, f.get(c));
  return j;
}

std::string machine_description() {
  std::string model = "unknown CPU";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
      break;
    }
  }
  const int cores = usable_cores();
  return fmt::format("{} core{} ({})", cores, cores == 1 ? "" : "s", model);
}

}  // namespace flynn::eval
