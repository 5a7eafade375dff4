#pragma once
// CPU time of the calling thread: the one home of that measurement (the federated party's
// compute time, the studies' own compute time).
#include <time.h>

namespace flynn::detail {

/// CPU seconds (user + system) the calling thread has used so far; 0 when the clock is
/// unavailable. Not wall time: other threads and processes sharing the cores do not
/// inflate it.
inline double thread_cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace flynn::detail
