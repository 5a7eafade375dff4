#pragma once
// A minimal fork-join helper over std::thread (no OpenMP, so every compiler and sanitizer
// build works the same way).
#include <cstddef>
#include <functional>

namespace flynn {

/// The number of worker threads to use: `requested` when > 0, otherwise the hardware
/// concurrency (at least 1).
int resolve_threads(int requested);

/// Calls task(i, worker) for every i in [0, n_tasks), spread over min(threads, n_tasks)
/// threads that take tasks in increasing order from a shared counter. `worker` is in
/// [0, threads) and identifies the calling thread, so callers can keep per-worker
/// accumulators. The first exception thrown by any task stops the remaining tasks from
/// starting and is rethrown to the caller after every thread has joined.
void parallel_for(std::size_t n_tasks, int threads,
                  const std::function<void(std::size_t task, int worker)>& task);

}  // namespace flynn
