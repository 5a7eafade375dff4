#pragma once
// A minimal fork-join helper over a persistent pool of std::threads (no OpenMP, so every
// compiler and sanitizer build works the same way). Helper threads are started on first
// need and then reused, so a small call pays a wake-up, not a thread start, per helper.
#include <cstddef>
#include <functional>

namespace flynn::detail {

/// Requests above max(kMaxThreadsFloor, 8 × cores) are capped there.
inline constexpr int kMaxThreadsFloor = 64;

/// The number of worker threads to use: `requested` when > 0 (capped, see above),
/// otherwise the hardware concurrency (at least 1).
int resolve_threads(int requested);

/// Calls task(i, worker) for every i in [0, n_tasks), spread over min(threads, n_tasks)
/// threads (the caller and pool helpers) that take tasks in increasing order from a shared
/// counter. `worker` is in [0, threads) and identifies the calling thread, so callers can
/// keep per-worker accumulators; the caller is worker 0. The first exception thrown by
/// any task stops the remaining tasks from starting and is rethrown to the caller once
/// every helper has left the call. Tasks may themselves call parallel_for (nesting cannot
/// deadlock), and a forked child process gets a fresh pool.
void parallel_for(std::size_t n_tasks, int threads,
                  const std::function<void(std::size_t task, int worker)>& task);

}  // namespace flynn::detail
