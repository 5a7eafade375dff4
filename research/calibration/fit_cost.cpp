// What fitting the calibration adds to training time, in process: FlyNN::fit (counting,
// then the leave-one-out calibration) against partial_fit on a fresh model (the same
// statistics and counting, no calibration: training as it was before fit() calibrated),
// alternated rep by rep on the same data and thread count, defaults only. Times are the
// process's CPU time (CLOCK_PROCESS_CPUTIME_ID): on a host shared with other work, time
// spent waiting for a core is not counted against either side.
//
// Build (from the repository root, after `cmake --build build --target flynn`):
//   c++ -std=c++20 -O2 -DFMT_SHARED -Iinclude -Ibuild/include research/calibration/fit_cost.cpp \
//     -o build/fit_cost build/src/core/libflynn_core.a -lhwy -lz -lfmt -lpthread
// Run:
//   build/fit_cost FILE [reps] [threads]
//   (prints: file, rows, median CPU seconds without and with, their ratio, the ratio of the minima)
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "flynn/classifier.hpp"
#include "flynn/config.hpp"
#include "flynn/io/loaders.hpp"

using namespace flynn;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double seconds(F&& f) {
  timespec a{}, b{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  f();
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  return double(b.tv_sec - a.tv_sec) + 1e-9 * double(b.tv_nsec - a.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fit_cost FILE [reps] [threads]\n");
    return 2;
  }
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  const Dataset data = io::load_dataset(argv[1], io::LoadOptions{});
  const FlyConfig config = HyperParams{}.resolve(static_cast<std::uint32_t>(data.n_features), data.classes.size());
  std::vector<double> plain, calibrated;
  for (int r = 0; r < reps; ++r) {
    FlyNN a(config, data.classes, threads), b(config, data.classes, threads);
    plain.push_back(seconds([&] { a.partial_fit(data); }));
    calibrated.push_back(seconds([&] { b.fit(data); }));
  }
  const double p = median(plain), c = median(calibrated);
  const double low_p = *std::min_element(plain.begin(), plain.end());
  const double low_c = *std::min_element(calibrated.begin(), calibrated.end());
  std::printf("%s\t%zu\t%.4f\t%.4f\t%.3f\t%.3f\n", argv[1], data.n_rows, p, c, c / p, low_c / low_p);
  return 0;
}
