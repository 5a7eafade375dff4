#pragma once
// Planning a command's phases inside a wall-clock limit (`flynn tune --time-limit`,
// Python's flynn.tune(time_limit=)): each phase's time is predicted from the measured time
// of the evaluations before it, and a phase starts only when it, and what must follow it,
// fit before the deadline.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "flynn/config.hpp"

namespace flynn::eval {

/// Work units of one cross-validated evaluation of `config` on `rows` rows of `n_classes`
/// classes in `k` folds, scoring `gammas` values of γ (FlyCvEvaluator::evaluate): hashing
/// (rows·m·s, once per fold on the per-fold path), choosing the winners (rows·m) and
/// scoring (rows·ρ·L per γ). WorkRate turns them into seconds.
double cv_evaluation_work(const FlyConfig& config, std::size_t rows, std::size_t n_classes,
                          std::uint32_t k, std::size_t gammas);

/// Work units of training `config` on `rows` rows (hashing, winners, counting).
double fit_work(const FlyConfig& config, std::size_t rows);

/// Seconds per work unit, measured on the evaluations done so far. The slowest rate seen
/// is the one used: the work units weigh the kernels of the variants alike, while their
/// real costs differ by several times (and a loaded machine slows some evaluations), so a
/// prediction errs on the long side.
class WorkRate {
 public:
  void add(double work, double seconds) {
    if (work > 0.0) rate_ = std::max(rate_, seconds / work);
  }
  /// The predicted seconds of `work` (0 before any measurement).
  double seconds_for(double work) const { return work * rate_; }

 private:
  double rate_ = 0.0;
};

/// How much longer than predicted an optional phase may take and still be started: it
/// starts only when kPlanMargin times its predicted time, and what must follow it, fit.
inline constexpr double kPlanMargin = 1.5;

/// A wall-clock deadline, or none.
class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  Deadline() = default;
  /// `seconds` after `start`; none for seconds ≤ 0.
  Deadline(Clock::time_point start, double seconds) : set_(seconds > 0.0), at_(start) {
    if (set_)
      at_ += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  bool set() const { return set_; }
  /// Seconds until the deadline (may be negative; +∞ without one).
  double left() const {
    return set_ ? std::chrono::duration<double>(at_ - Clock::now()).count()
                : std::numeric_limits<double>::infinity();
  }
  /// Whether `seconds` of work started now ends before the deadline (always without one).
  bool fits(double seconds) const { return !set_ || seconds <= left(); }

 private:
  bool set_ = false;
  Clock::time_point at_{};
};

}  // namespace flynn::eval
