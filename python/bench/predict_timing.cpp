// The C++ side of python/bench/bench_python.py: times FlyNN prediction in-process on the
// same rows and model as the Python side, with the same measures (medians over repeated
// calls on rows already in memory as uint8, loading excluded): wall time, and the
// process's CPU time (all threads), which a busy machine disturbs much less.
//
//   flynn_python_predict_timing MODEL DATA THREADS [BATCH_REPEATS] [ONE_ROW_CALLS]
//
// DATA is any file flynn reads (IDX images, CSV, ...); its values must be pixels 0..255.
// THREADS as n_jobs' translation (0 = all cores). Prints one JSON object: batch_* (all
// rows in one call) and one_row_* (one row per call), each *_wall and *_cpu seconds.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "flynn/data_view.hpp"
#include "flynn/error.hpp"
#include "flynn/io/loaders.hpp"
#include "flynn/io/model_file.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Runs fn once, appending its wall and process-CPU seconds.
template <typename Fn>
void measure(Fn&& fn, std::vector<double>& wall, std::vector<double>& cpu) {
  const double c0 = cpu_now();
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  cpu.push_back(cpu_now() - c0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL DATA THREADS [BATCH_REPEATS] [ONE_ROW_CALLS]\n",
                 argv[0]);
    return 2;
  }
  try {
    const int threads = std::stoi(argv[3]);
    const int batch_repeats = argc > 4 ? std::stoi(argv[4]) : 3;
    const int one_row_calls = argc > 5 ? std::stoi(argv[5]) : 200;
    const flynn::FlyNN model = flynn::io::load_model(argv[1], threads);
    flynn::io::LoadOptions load;
    load.require_labels = false;
    const flynn::Dataset data = flynn::io::load_dataset(argv[2], load);
    // The rows as the Python side holds them: uint8 pixels.
    std::vector<std::uint8_t> pixels(data.features.size());
    for (std::size_t i = 0; i < pixels.size(); ++i) {
      const float v = data.features[i];
      if (!(v >= 0 && v <= 255 && v == static_cast<float>(static_cast<int>(v))))
        throw flynn::Error(data.source + ": values must be pixels 0..255");
      pixels[i] = static_cast<std::uint8_t>(v);
    }
    const flynn::DataView rows(pixels.data(), data.n_rows, data.n_features);

    std::vector<double> batch_wall, batch_cpu, one_wall, one_cpu;
    std::uint64_t checksum = 0;  // keeps the calls from being optimised away
    for (int r = 0; r < batch_repeats; ++r)
      measure([&] { checksum += model.predict(rows).back(); }, batch_wall, batch_cpu);
    for (int c = 0; c < one_row_calls; ++c) {
      const flynn::DataView row = rows.rows(static_cast<std::size_t>(c) % data.n_rows, 1);
      measure([&] { checksum += model.predict(row).front(); }, one_wall, one_cpu);
    }
    std::printf("{\"rows\": %zu, \"threads\": %d, \"batch_wall\": %.6f, \"batch_cpu\": %.6f, "
                "\"one_row_wall\": %.9f, \"one_row_cpu\": %.9f, \"checksum\": %llu}\n",
                data.n_rows, threads, median(batch_wall), median(batch_cpu), median(one_wall),
                median(one_cpu), static_cast<unsigned long long>(checksum));
  } catch (const flynn::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
