#include "flynn/federated/study_io.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"

namespace flynn::federated {

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

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string q = "\"";
  for (char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

Dataset load_fashion_mnist(const std::string& dir, bool test) {
  const std::string stem = test ? "t10k-images-idx3-ubyte" : "train-images-idx3-ubyte";
  for (const char* ext : {".gz", ""}) {
    const fs::path p = fs::path(dir) / (stem + ext);
    if (!fs::exists(p)) continue;
    io::LoadOptions load;
    load.format = io::Format::Idx;
    return io::load_dataset(p.string(), load);
  }
  throw Error(fmt::format("{}: no {}[.gz] (Debian package dataset-fashion-mnist, or "
                          "--fashion-dir)", dir, stem));
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

}  // namespace flynn::federated
