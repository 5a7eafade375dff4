// parallel_for over the persistent pool: every task once, worker ids exclusive, errors
// propagated, nested calls, many small calls, and a usable pool in a forked child.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "flynn/detail/parallel.hpp"

namespace flynn::detail {
namespace {

TEST(ParallelFor, EveryTaskOnceAndWorkerIdsExclusive) {
  for (int threads : {1, 2, 3, 8}) {
    const std::size_t n = 1000;
    std::vector<std::atomic<int>> runs(n);
    std::vector<std::atomic<int>> busy(static_cast<std::size_t>(threads));
    std::atomic<bool> overlap{false}, out_of_range{false};
    parallel_for(n, threads, [&](std::size_t i, int worker) {
      if (worker < 0 || worker >= threads) {
        out_of_range = true;
        return;
      }
      // Two threads with the same worker id at once would corrupt per-worker state.
      if (busy[static_cast<std::size_t>(worker)].fetch_add(1) != 0) overlap = true;
      runs[i].fetch_add(1);
      busy[static_cast<std::size_t>(worker)].fetch_sub(1);
    });
    EXPECT_FALSE(overlap) << threads;
    EXPECT_FALSE(out_of_range) << threads;
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(runs[i].load(), 1) << "task " << i;
  }
}

TEST(ParallelFor, FirstErrorIsRethrownAndStopsTheRest) {
  // The other tasks take a while each, so that "the rest stopped" does not depend on the
  // scheduler: with trivial tasks the caller can run all of them while the thread that
  // took task 10 is descheduled between taking it and throwing (seen on a loaded 2-core
  // CI machine). Here that thread would have to stall for over a second.
  constexpr std::size_t kTasks = 10000;
  std::atomic<std::size_t> started{0};
  try {
    parallel_for(kTasks, 4, [&](std::size_t i, int) {
      started.fetch_add(1);
      if (i == 10) throw std::runtime_error("task 10 failed");
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    });
    ADD_FAILURE() << "parallel_for did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task 10 failed");
  }
  EXPECT_LT(started.load(), kTasks);
  // The pool is still fine afterwards.
  std::atomic<int> sum{0};
  parallel_for(10, 4, [&](std::size_t i, int) { sum += static_cast<int>(i); });
  EXPECT_EQ(sum.load(), 45);
}

TEST(ParallelFor, NestedCallsComplete) {
  std::atomic<long> total{0};
  parallel_for(16, 4, [&](std::size_t outer, int) {
    parallel_for(50, 3, [&](std::size_t inner, int) {
      total += static_cast<long>(outer * 100 + inner);
    });
  });
  long expected = 0;
  for (long o = 0; o < 16; ++o)
    for (long i = 0; i < 50; ++i) expected += o * 100 + i;
  EXPECT_EQ(total.load(), expected);
}

TEST(ParallelFor, ManySmallCalls) {
  std::atomic<long> total{0};
  for (int call = 0; call < 3000; ++call)
    parallel_for(2, 2, [&](std::size_t i, int) { total += static_cast<long>(i) + 1; });
  EXPECT_EQ(total.load(), 3000L * 3);
}

TEST(ParallelFor, WorksInAForkedChild) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer refuses to start threads after a multi-threaded fork";
#endif
  // Make sure the parent's pool has helpers, then fork: the child has none of them.
  parallel_for(8, 4, [](std::size_t, int) {});
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(30);  // a hang kills the child, which the parent reports
    std::atomic<int> sum{0};
    parallel_for(100, 4, [&](std::size_t i, int) { sum += static_cast<int>(i); });
    _exit(sum.load() == 4950 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child did not exit normally (signal "
                                 << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ResolveThreads, AbsurdRequestsAreCapped) {
  // --threads 100000 once allocated gigabytes of per-thread buffers.
  const int hw = resolve_threads(0);
  EXPECT_GE(hw, 1);
  EXPECT_EQ(resolve_threads(3), 3);
  EXPECT_EQ(resolve_threads(100000), std::max(kMaxThreadsFloor, 8 * hw));
  std::atomic<int> calls{0};
  parallel_for(10, 100000, [&](std::size_t, int) { ++calls; });
  EXPECT_EQ(calls.load(), 10);
}

}  // namespace
}  // namespace flynn::detail
