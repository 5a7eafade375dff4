#pragma once
// Progress reporting for long operations (training, prediction, cross-validation).
#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>

namespace flynn {

/// Called with (work done, total work) as a long operation advances; return false to
/// cancel it (the operation then throws flynn::Cancelled). Calls are serialised: the
/// callback never runs on two threads at once, but it may run on a worker thread.
using ProgressFn = std::function<bool(std::size_t done, std::size_t total)>;

/// Thread-safe accumulator in front of a ProgressFn: workers add work units, the callback
/// sees monotone totals.
class ProgressTracker {
 public:
  ProgressTracker(const ProgressFn& fn, std::size_t total) : fn_(fn), total_(total) {}
  /// Adds `units` of finished work; throws flynn::Cancelled if the callback asks to stop.
  void advance(std::size_t units);

 private:
  const ProgressFn& fn_;
  std::size_t total_;
  std::atomic<std::size_t> done_{0};
  std::mutex mutex_;
};

}  // namespace flynn
