#include "federated/grpc_party_stream.hpp"

#include <grpcpp/support/proto_buffer_reader.h>

#include <algorithm>

#include <fmt/format.h>

#include "federated/relayed_text.hpp"
#include "federated/safety_switches.hpp"
#include "flynn/federated/party.hpp"
#include "grpc_wire.hpp"

namespace flynn::federated {

using namespace grpcwire;

namespace {

// How long a party that gives up still spends on telling the coordinator why and on
// closing its stream, all of it together.
constexpr double kGraceSeconds = 2;

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

// The method of proto/federation.proto's service, for a call written as messages and read
// as raw bytes (the generated stub reads parsed messages, which this party checks first).
const std::string& federate_method() {
  static const std::string name = "/" + std::string(pb::Coordinator::service_full_name()) + "/Federate";
  return name;
}

std::string unreachable(const std::string& server, const std::string& why) {
  return fmt::format("cannot reach the coordinator at {} over mutual TLS ({}): either no coordinator "
                     "listens there, or the TLS handshake failed (certificates not signed by the same CA, "
                     "no client certificate, or a server name that does not match the coordinator's "
                     "certificate)",
                     server, why);
}

}  // namespace

PartyStream::PartyStream(const JoinOptions& options, const std::shared_ptr<grpc::ChannelCredentials>& credentials)
    : options_(options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(options.max_message_bytes));
  args.SetMaxSendMessageSize(static_cast<int>(options.max_message_bytes));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  if (!options.server_name.empty()) args.SetSslTargetNameOverride(options.server_name);
  channel_ = grpc::CreateCustomChannel(options.server, credentials, args);
  connect(options.server);
  watchdog_ = std::thread([this] { watch(); });
  static const grpc::internal::RpcMethod method(federate_method().c_str(), grpc::internal::RpcMethod::BIDI_STREAMING);
  // Opening the call waits for the connection; the watchdog bounds it like any write
  // (without the bounded waits — a test's control — gRPC's own connection attempt decides).
  const auto open = [&] {
    call_.reset(grpc::internal::ClientReaderWriterFactory<pb::PartyMessage, grpc::ByteBuffer>::Create(
        channel_.get(), method, &context_));
    return true;
  };
  if (safety_check_on(SafetyCheck::BoundedShutdown)) guarded(open);
  else open();
  reader_ = std::thread([this] { read_loop(); });
}

PartyStream::~PartyStream() { close(true); }

// TCP connection and TLS handshake within the deadline: a coordinator that accepts the
// connection and then never completes the handshake cannot hold the party.
void PartyStream::connect(const std::string& server) {
  if (!safety_check_on(SafetyCheck::BoundedShutdown)) return;
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(options_.deadline_seconds));
  grpc_connectivity_state state = channel_->GetState(true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN)
      throw FederationError(unreachable(server, "the connection failed"));
    if (!channel_->WaitForStateChange(state, deadline))
      throw FederationError(fmt::format(
          "could not connect to the coordinator at {} within {} s (--deadline): the TCP connection or the "
          "TLS handshake did not complete", server, options_.deadline_seconds));
    state = channel_->GetState(true);
  }
}

void PartyStream::read_loop() {
  grpc::ByteBuffer bytes;
  while (call_->Read(&bytes)) {
    Inbound in = check(bytes);
    bytes.Clear();
    const bool refused = !in.problem.empty();
    std::lock_guard<std::mutex> lock(mutex_);
    // Without the bounded shutdown (a test's control), a message that does not parse ends
    // the stream as gRPC's own parsing did: the party then waits for a status.
    if (refused && !safety_check_on(SafetyCheck::BoundedShutdown)) break;
    inbox_.push_back(std::move(in));
    cv_.notify_all();
    if (refused) break;  // nothing the coordinator sends after that is read
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ended_ = true;
  cv_.notify_all();
}

// A message as received: its size against the bound, then parsed (bounded nesting), then
// free of unknown fields.
PartyStream::Inbound PartyStream::check(grpc::ByteBuffer& bytes) {
  const std::size_t n = bytes.Valid() ? bytes.Length() : 0;
  std::size_t limit = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wire_.bytes_received += n;
    ++wire_.messages_received;
    limit = limit_;
  }
  const bool bounded = safety_check_on(SafetyCheck::MessageBounds);
  const auto too_large = [&] {
    return fmt::format("the coordinator sent a message of {} bytes where this party expects at most {} (what "
                       "the federation's configuration implies at this step): refusing it unread", n, limit);
  };
  Inbound in;
  if (bounded && n > std::max(limit, kMaxAbortBytes)) {
    in.problem = too_large();
    return in;
  }
  std::optional<pb::CoordinatorMessage> m;
  if (n == 0) {
    m = parse_coordinator_message(std::string_view());
  } else {
    grpc::ProtoBufferReader reader(&bytes);
    m = parse_coordinator_message(reader);
  }
  if (!m)
    in.problem = fmt::format("the coordinator sent {} bytes that do not parse as a message of the protocol "
                             "(malformed, or nested more than {} deep)", n, kMaxNesting);
  else if (bounded && has_unknown_fields(*m))
    in.problem = fmt::format("the coordinator's {} holds fields this flynn does not know (another protocol "
                             "version, or a forged message): refusing it", kind_name(*m));
  else if (bounded && n > limit && !m->has_abort())
    in.problem = too_large();
  else
    in.message = std::move(m);
  return in;
}

void PartyStream::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (op_deadline_ && Clock::now() >= *op_deadline_) {
      op_timed_out_ = true;
      op_deadline_.reset();
      context_.TryCancel();  // thread-safe; the blocked operation returns
      continue;
    }
    if (op_deadline_) cv_.wait_until(lock, *op_deadline_);
    else cv_.wait(lock);
  }
}

// The longest a wait may take now: the deadline, or what is left of the grace once the
// party gives up (mutex held).
PartyStream::Clock::duration PartyStream::wait_limit() const {
  Clock::duration d = seconds(options_.deadline_seconds);
  if (grace_until_) d = std::min(d, std::max(Clock::duration::zero(), *grace_until_ - Clock::now()));
  return d;
}

// Runs one stream operation under the watchdog (write_mutex_ held by the caller, or the
// call not yet shared).
template <class Op>
bool PartyStream::guarded(Op op) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    op_deadline_ = Clock::now() + wait_limit();
    cv_.notify_all();
  }
  const bool ok = op();
  std::lock_guard<std::mutex> lock(mutex_);
  op_deadline_.reset();
  return ok;
}

void PartyStream::give_up() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!grace_until_) grace_until_ = Clock::now() + seconds(kGraceSeconds);
}

void PartyStream::write(const pb::PartyMessage& m) {
  {
    std::lock_guard<std::mutex> lock(write_mutex_);
    if (!writes_done_ && guarded([&] { return call_->Write(m); })) {
      std::lock_guard<std::mutex> l(mutex_);
      wire_.bytes_sent += m.ByteSizeLong();
      ++wire_.messages_sent;
      return;
    }
  }
  bool timed_out = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    timed_out = op_timed_out_;
  }
  if (timed_out)
    throw FederationError(fmt::format(
        "the coordinator did not accept this party's message within {} s (--deadline): it stopped reading; "
        "giving up", options_.deadline_seconds));
  // The stream is gone: what the coordinator said last (a queued Abort, the final status)
  // is the reason; next() reports it.
  next("the coordinator to accept a message");
  throw FederationError("the connection to the coordinator is closed");
}

void PartyStream::write_last(const pb::PartyMessage& m) {
  give_up();
  std::lock_guard<std::mutex> lock(write_mutex_);
  if (!writes_done_) guarded([&] { return call_->Write(m); });
}

pb::CoordinatorMessage PartyStream::next(const std::string& what) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_until(lock, Clock::now() + wait_limit(), [&] { return !inbox_.empty() || ended_; });
  if (!inbox_.empty()) {
    Inbound in = std::move(inbox_.front());
    inbox_.pop_front();
    if (!in.problem.empty()) throw FederationError(in.problem);
    if (in.message->has_abort())
      throw FederationError(fmt::format("the federation was stopped: {}",
                                        relayed_from("the coordinator", in.message->abort().reason())));
    return std::move(*in.message);
  }
  if (ended_) {
    lock.unlock();
    throw FederationError(status_text() + fmt::format(" (while waiting for {})", what));
  }
  lock.unlock();
  throw FederationError(fmt::format("no answer from the coordinator within {} s while waiting for {}",
                                    options_.deadline_seconds, what));
}

void PartyStream::expect_at_most(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_ = bytes;
}

// The final status of a stream whose read side ended without an Abort. It is normally
// there at once; a coordinator that keeps the stream open after a message this party
// refused would hold Finish for ever, so it is cancelled after the grace.
std::string PartyStream::status_text() {
  {
    std::lock_guard<std::mutex> lock(write_mutex_);
    if (!status_) {
      writes_done_ = true;
      if (safety_check_on(SafetyCheck::BoundedShutdown)) {
        give_up();
        grpc::Status s;
        guarded([&] {
          s = call_->Finish();
          return true;
        });
        status_ = s;
      } else {
        status_ = call_->Finish();
      }
    }
  }
  const std::string msg = inert_text(status_->error_message());
  switch (status_->error_code()) {
    case grpc::StatusCode::UNAVAILABLE: return unreachable(options_.server, msg.empty() ? "unavailable" : msg);
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED: return fmt::format("the connection to the coordinator was cancelled ({})", msg);
    default:
      return fmt::format("the coordinator ended the connection: {}",
                         msg.empty() ? "no reason given" : relayed_from("the coordinator", status_->error_message()));
  }
}

void PartyStream::close(bool giving_up) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return;
    closed_ = true;
  }
  if (giving_up) give_up();
  {
    std::lock_guard<std::mutex> lock(write_mutex_);
    if (!writes_done_ && call_) guarded([&] { return call_->WritesDone(); });
    writes_done_ = true;
  }
  // Give the coordinator a moment to end the stream itself (after Done or Abort), then cut.
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto limit = Clock::now() + std::min(wait_limit(), seconds(kGraceSeconds));
    cv_.wait_until(lock, limit, [&] { return ended_; });
  }
  context_.TryCancel();
  if (reader_.joinable()) reader_.join();
  {
    std::lock_guard<std::mutex> lock(write_mutex_);
    if (!status_ && call_) status_ = call_->Finish();  // cancelled: returns at once
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (watchdog_.joinable()) watchdog_.join();
}

WireTraffic PartyStream::traffic() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return wire_;
}

}  // namespace flynn::federated
