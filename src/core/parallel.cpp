#include "flynn/detail/parallel.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

namespace flynn::detail {

int resolve_threads(int requested) {
  // Asked once: hardware_concurrency reads /sys on every call, a cost that showed in the
  // profile of one-row predictions.
  static const int hw = [] {
    const unsigned reported = std::thread::hardware_concurrency();
    return reported == 0 ? 1 : static_cast<int>(std::min(reported, 1u << 16));
  }();
  if (requested <= 0) return hw;
  // Results never depend on the thread count, so a request far beyond the machine (say
  // 100000, each with its own buffers) is served with a sane number instead.
  return std::min(requested, std::max(kMaxThreadsFloor, 8 * hw));
}

namespace {

// One parallel_for call. It lives on the caller's stack; the pool only ever touches it
// between taking one of its tickets and reporting that ticket finished, and the caller
// does not return before every taken ticket is finished.
struct Job {
  const std::function<void(std::size_t, int)>* task = nullptr;
  std::size_t n_tasks = 0;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::exception_ptr first_error;
  int running_helpers = 0;  // tickets taken and not yet finished (guarded by the pool mutex)

  // Takes tasks from the shared counter until none are left or one has failed.
  void run(int worker) {
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= n_tasks) return;
      try {
        (*task)(i, worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
        return;
      }
    }
  }
};

// An invitation for one pool thread to help `job` as worker number `worker`.
struct Ticket {
  Job* job;
  int worker;
};

// Persistent helper threads, started on demand and kept for the life of the process, so
// that a call pays a condition-variable wake-up instead of a thread start per helper.
//
// Deadlock freedom, including nested calls (a task that itself calls parallel_for): the
// caller always works through its own job, so a job completes even if no helper ever
// takes one of its tickets; when the caller runs out of tasks it withdraws the tickets
// nobody took and waits only for helpers that are already running tasks of its job, and
// those finish without waiting on anything. To keep nested calls as parallel as they
// were with a thread per helper, a call starts new threads whenever there are more
// waiting tickets than idle threads.
class Pool {
 public:
  static Pool& instance() {
    // Never destroyed: helpers may still be parked on the condition variable at exit,
    // and a parallel_for from another static's destructor must still work.
    static const bool created = [] {
      new Pool;  // registers itself as current_
      pthread_atfork(&Pool::before_fork, &Pool::after_fork_parent, &Pool::after_fork_child);
      return true;
    }();
    (void)created;
    return *current_;
  }

  void run(Job& job, int helpers) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int w = 1; w <= helpers; ++w) queue_.push_back(Ticket{&job, w});
      while (idle_ < static_cast<int>(queue_.size()) && started_ < kMaxThreads) start_thread();
    }
    if (helpers == 1) {
      wake_.notify_one();
    } else {
      wake_.notify_all();
    }
    job.run(0);
    std::unique_lock<std::mutex> lock(mutex_);
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                                [&](const Ticket& t) { return t.job == &job; }),
                 queue_.end());
    finished_.wait(lock, [&] { return job.running_helpers == 0; });
  }

 private:
  // Far beyond any sensible thread count; a guard against runaway nesting.
  static constexpr int kMaxThreads = 1024;

  Pool() { current_ = this; }

  // Counts the new thread as idle at once (it will be, as soon as it gets the lock), so
  // that run() starts exactly as many as it lacks.
  void start_thread() {
    ++started_;
    ++idle_;
    std::thread([this] { serve(); }).detach();
  }

  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !queue_.empty(); });
      --idle_;
      const Ticket ticket = queue_.front();
      queue_.pop_front();
      ++ticket.job->running_helpers;
      lock.unlock();
      ticket.job->run(ticket.worker);
      lock.lock();
      if (--ticket.job->running_helpers == 0) finished_.notify_all();
      ++idle_;
    }
  }

  // fork() copies only the calling thread: the child must not wait for helpers that do
  // not exist in it, nor inherit a mutex a helper held. The pool's mutex is held across
  // fork, and the child starts over with a fresh pool (the old one is left as it is).
  static void before_fork() { current_->mutex_.lock(); }
  static void after_fork_parent() { current_->mutex_.unlock(); }
  static void after_fork_child() { current_ = new Pool; }

  static inline Pool* current_ = nullptr;

  std::mutex mutex_;
  std::condition_variable wake_;      // tickets are waiting
  std::condition_variable finished_;  // some job's last running helper finished
  std::deque<Ticket> queue_;
  int idle_ = 0;     // threads parked in serve() or about to be
  int started_ = 0;  // threads started
};

}  // namespace

void parallel_for(std::size_t n_tasks, int threads,
                  const std::function<void(std::size_t, int)>& task) {
  if (n_tasks == 0) return;
  const int workers = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(resolve_threads(threads)), n_tasks));
  if (workers == 1) {
    for (std::size_t i = 0; i < n_tasks; ++i) task(i, 0);
    return;
  }
  Job job;
  job.task = &task;
  job.n_tasks = n_tasks;
  Pool::instance().run(job, workers - 1);
  if (job.first_error) std::rethrow_exception(job.first_error);
}

}  // namespace flynn::detail
