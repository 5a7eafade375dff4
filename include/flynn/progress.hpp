#pragma once
// Progress reporting for long operations (training, prediction, cross-validation).
#include <cstddef>
#include <functional>

namespace flynn {

/// Called with (work done, total work) as a long operation advances; return false to
/// cancel it (the operation then throws flynn::Cancelled). Calls are serialised: the
/// callback never runs on two threads at once, but it may run on a worker thread.
using ProgressFn = std::function<bool(std::size_t done, std::size_t total)>;

}  // namespace flynn
