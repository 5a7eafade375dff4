#pragma once
// A party's one stream to the coordinator (internal to the gRPC transport): the
// connection, a reader thread that parses what the coordinator sends and queues it (so an
// Abort is never lost while the party counts), and a watchdog that puts every wait under
// the deadline — connecting (TCP and TLS handshake), each write, the half-close and the
// shutdown (Finish) — so that a party exits within its deadline plus a few seconds
// whatever the coordinator sends or withholds.
//
// The reader takes each message as raw bytes and checks it before parsing: no larger than
// the bound the party set for what it awaits (expect_at_most: what the agreed
// configuration implies), parseable at most kMaxNesting deep, and without fields this
// build does not know. A message that fails stops the party with the reason. (gRPC has
// already received the whole message by then, up to --max-message-mb: the transport's own
// cap, docs/guide/federated.md "Limits".)
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "federated/wire_messages.hpp"
#include "flynn/federated/grpc.hpp"

namespace flynn::federated {

class PartyStream {
 public:
  /// Connects to options.server with `credentials`, within options.deadline_seconds, and
  /// opens the Federate call. Throws FederationError naming why it could not.
  PartyStream(const JoinOptions& options, const std::shared_ptr<grpc::ChannelCredentials>& credentials);
  /// close(true) unless closed.
  ~PartyStream();
  PartyStream(const PartyStream&) = delete;
  PartyStream& operator=(const PartyStream&) = delete;

  /// Sends `m`; throws FederationError when the coordinator does not take it within the
  /// deadline or the stream ended (with the reason the coordinator gave, if any).
  void write(const grpcwire::pb::PartyMessage& m);
  /// Sends `m` if the stream still takes it within a short grace (a Failure as the party
  /// gives up); never throws.
  void write_last(const grpcwire::pb::PartyMessage& m);
  /// The next message (an Abort is thrown as FederationError with its reason, escaped and
  /// marked as the coordinator's); waits at most the deadline. `what` names what the
  /// party waits for, in messages.
  grpcwire::pb::CoordinatorMessage next(const std::string& what);
  /// The largest message the party accepts from now on (an Abort is always accepted).
  void expect_at_most(std::size_t bytes);
  /// Half-closes, lets the coordinator end the stream (a short grace), then cancels and
  /// collects the status; bounded in time. `giving_up`: the party stops on a failure, so
  /// the grace is short and the call is cancelled before Finish.
  void close(bool giving_up);

  /// The call's context (for the coordinator's certificate, once a message arrived).
  const grpc::ClientContext& context() const { return context_; }
  /// What crossed the stream so far.
  WireTraffic traffic() const;

 private:
  using Clock = std::chrono::steady_clock;
  // Written as messages, read as raw bytes (checked before they are parsed).
  using Call = grpc::ClientReaderWriter<grpcwire::pb::PartyMessage, grpc::ByteBuffer>;
  struct Inbound {
    std::optional<grpcwire::pb::CoordinatorMessage> message;
    std::string problem;  ///< why the message was refused ("" when it was not)
  };

  void connect(const std::string& server);
  void read_loop();
  Inbound check(grpc::ByteBuffer& bytes);
  void watch();
  template <class Op>
  bool guarded(Op op);
  std::string status_text();
  void give_up();
  Clock::duration wait_limit() const;

  const JoinOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  grpc::ClientContext context_;
  std::unique_ptr<Call> call_;
  std::thread reader_, watchdog_;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable cv_;
  std::deque<Inbound> inbox_;
  bool ended_ = false;                   // the reader stopped
  std::optional<grpc::Status> status_;   // the call's final status, once collected
  std::size_t limit_ = grpcwire::kMaxWelcomeBytes;
  WireTraffic wire_;
  std::optional<Clock::time_point> op_deadline_;  // of the guarded operation in flight
  std::optional<Clock::time_point> grace_until_;  // set once the party gives up
  bool op_timed_out_ = false, stopping_ = false, closed_ = false;

  std::mutex write_mutex_;  // one write (or half-close, or Finish) at a time
  bool writes_done_ = false;
};

}  // namespace flynn::federated
