#pragma once
// The write side of one party's stream at the coordinator (internal to the gRPC
// transport): a bounded queue with one write in flight, so that a party that stops reading
// stalls only its own stream, and messages meant for several parties are shared, not
// copied.
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>

#include "grpc_wire.hpp"

namespace flynn::federated {

/// The reactor of one party's stream (gRPC's callback API).
using PartyReactor = grpc::ServerBidiReactor<grpcwire::pb::PartyMessage, grpcwire::pb::CoordinatorMessage>;
/// A message to one or more parties, shared between their outboxes.
using SharedMessage = std::shared_ptr<const grpcwire::pb::CoordinatorMessage>;

/// Messages one stream may have queued. The protocol is lock-step (a party has at most a
/// result and an abort or done pending), so only a party that stops reading gets near it.
inline constexpr std::size_t kMaxQueuedMessages = 64;

class Outbox {
 public:
  using Clock = std::chrono::steady_clock;
  Outbox(PartyReactor* reactor, grpc::CallbackServerContext* context) : reactor_(reactor), context_(context) {}

  /// Queues `m`. False when the queue is full (the party is not reading); a closed outbox
  /// drops the message and returns true.
  bool send(SharedMessage m);
  /// Ends the stream with `status` once what is queued has been written.
  void close(grpc::Status status);
  /// Cancels the stream (its stuck write then fails, and close() can finish it).
  void cancel();
  /// Seconds the write in flight has been waiting (0 when none).
  double stalled_seconds(Clock::time_point now) const;
  /// What was written so far (sent bytes and messages only).
  WireTraffic sent() const;

  /// The reactor's reactions.
  void on_write_done(bool ok);
  void on_done();

 private:
  void start_next(std::unique_lock<std::mutex>& lock);

  PartyReactor* reactor_;
  grpc::CallbackServerContext* context_;
  // Keeps the context alive for cancel() (on_done waits for it); recursive because gRPC
  // may run reactions (OnCancel, which closes this outbox) inside TryCancel.
  std::recursive_mutex cancel_mutex_;
  bool context_gone_ = false;
  mutable std::mutex mutex_;  // guards the rest
  std::deque<SharedMessage> queue_;
  SharedMessage current_;
  bool writing_ = false, closing_ = false, finished_ = false, broken_ = false, done_ = false;
  grpc::Status status_;
  Clock::time_point write_started_;
  WireTraffic wire_;  // sent only
};

}  // namespace flynn::federated
