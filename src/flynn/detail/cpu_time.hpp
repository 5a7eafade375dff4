#pragma once
// The clocks flynn reports, each measured in one place: CPU time of the calling thread (the
// federated party's compute time, the studies' own compute time) and wall time since a
// point (every "seconds" of a command's or a study's report).
#include <time.h>

#include <chrono>

namespace flynn::detail {

/// CPU seconds (user + system) the calling thread has used so far; 0 when the clock is
/// unavailable. Not wall time: other threads and processes sharing the cores do not
/// inflate it.
inline double thread_cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

/// Wall-clock seconds since `start` (steady clock).
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace flynn::detail
