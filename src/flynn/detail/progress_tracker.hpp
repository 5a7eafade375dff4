#pragma once
// Internal: the thread-safe accumulator the library's long operations put in front of a
// user's ProgressFn.
#include <atomic>
#include <cstddef>
#include <mutex>

#include "flynn/progress.hpp"

namespace flynn::detail {

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

}  // namespace flynn::detail
