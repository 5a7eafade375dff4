#include "flynn/detail/progress_tracker.hpp"

#include "flynn/error.hpp"

namespace flynn::detail {

void ProgressTracker::advance(std::size_t units) {
  const std::size_t done = done_.fetch_add(units, std::memory_order_relaxed) + units;
  if (!fn_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!fn_(done, total_)) throw Cancelled();
}

}  // namespace flynn::detail
