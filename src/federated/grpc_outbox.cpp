#include "federated/grpc_outbox.hpp"

namespace flynn::federated {

bool Outbox::send(SharedMessage m) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (closing_ || broken_ || done_) return true;
  if (queue_.size() >= kMaxQueuedMessages) return false;
  queue_.push_back(std::move(m));
  if (writing_) return true;
  start_next(lock);
  return true;
}

void Outbox::close(grpc::Status status) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (closing_ || done_) return;
  closing_ = true;
  status_ = std::move(status);
  if (writing_) return;  // on_write_done finishes
  finished_ = true;
  lock.unlock();
  reactor_->Finish(status_);
}

void Outbox::cancel() {
  std::lock_guard<std::recursive_mutex> lock(cancel_mutex_);
  if (!context_gone_) context_->TryCancel();
}

double Outbox::stalled_seconds(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writing_ ? std::chrono::duration<double>(now - write_started_).count() : 0;
}

WireTraffic Outbox::sent() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return wire_;
}

void Outbox::on_write_done(bool ok) {
  std::unique_lock<std::mutex> lock(mutex_);
  writing_ = false;
  if (ok) {
    wire_.bytes_sent += current_->ByteSizeLong();
    ++wire_.messages_sent;
  } else {
    broken_ = true;  // cancelled or gone: nothing more will be written
    queue_.clear();
  }
  current_.reset();
  if (!queue_.empty()) {
    start_next(lock);
    return;
  }
  if (closing_ && !finished_) {
    finished_ = true;
    lock.unlock();
    reactor_->Finish(status_);
  }
}

void Outbox::on_done() {
  {
    std::lock_guard<std::recursive_mutex> lock(cancel_mutex_);
    context_gone_ = true;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = true;
}

// Starts writing the queue's head (lock held on entry, released on return). Safe without
// the lock: Finish, the only way to end the reactor, waits for this write.
void Outbox::start_next(std::unique_lock<std::mutex>& lock) {
  current_ = std::move(queue_.front());
  queue_.pop_front();
  writing_ = true;
  write_started_ = Clock::now();
  const grpcwire::pb::CoordinatorMessage* m = current_.get();
  lock.unlock();
  reactor_->StartWrite(m);
}

}  // namespace flynn::federated
