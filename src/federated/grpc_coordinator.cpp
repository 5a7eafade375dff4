// The coordinator side of the gRPC backend, on gRPC's callback API: no thread per stream,
// and nothing a party does (or fails to do) can block the coordinator.
//
//   * Connections come through the gate (grpc_connection_gate.hpp), which bounds what a
//     connection may send and how long it may live before its Join is accepted.
//   * A session is checked when it opens, before anything is read: CN, --allow, clientAuth
//     usage, --crl, duplicates, a full federation, how many sessions already wait. Then its
//     Join is bounded and checked against the TLS peer's certificate.
//   * Every stream writes through its own Outbox: a bounded queue with one write in
//     flight. Messages for several parties are shared, not copied. A party that stops
//     reading stalls only its own outbox; the watchdog (Coordinator::run) aborts the
//     federation naming it when a write to it is older than the deadline, and cancels its
//     stream. Aborting queues the reason on every outbox and returns at once.
//   * Reactions (reads, write completions, cancellations) run on gRPC's callback threads
//     and only take short locks. Lock order: State::mutex, then an Outbox's mutex; no
//     gRPC call is made while State::mutex is held.
#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/peer_certificate.hpp"
#include "flynn/io/model_file.hpp"
#include "grpc_connection_gate.hpp"
#include "grpc_wire.hpp"

namespace flynn::federated {

using namespace grpcwire;
using Clock = std::chrono::steady_clock;
using Reactor = grpc::ServerBidiReactor<pb::PartyMessage, pb::CoordinatorMessage>;
using Message = std::shared_ptr<const pb::CoordinatorMessage>;

namespace {

// Messages one stream may have queued. The protocol is lock-step (a party has at most a
// result and an abort or done pending), so only a party that stops reading gets near it.
constexpr std::size_t kMaxQueuedMessages = 64;
// Refusals logged one by one; after that only every 100th (a flood stays readable).
constexpr std::uint64_t kRefusalsLogged = 32;
// After the federation ended: how long a stream may take to deliver its last message.
constexpr double kFlushSeconds = 2;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The write side of one stream: a bounded queue, one StartWrite in flight, Finish once
// everything queued before close() was written (or the stream broke).
class Outbox {
 public:
  Outbox(Reactor* reactor, grpc::CallbackServerContext* context) : reactor_(reactor), context_(context) {}

  // Queues `m`. False when the queue is full (the party is not reading); a closed outbox
  // drops the message and returns true.
  bool send(Message m) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (closing_ || broken_ || done_) return true;
    if (queue_.size() >= kMaxQueuedMessages) return false;
    queue_.push_back(std::move(m));
    if (writing_) return true;
    start_next(lock);
    return true;
  }

  // Ends the stream with `status` once what is queued has been written.
  void close(grpc::Status status) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (closing_ || done_) return;
    closing_ = true;
    status_ = std::move(status);
    if (writing_) return;  // on_write_done finishes
    finished_ = true;
    lock.unlock();
    reactor_->Finish(status_);
  }

  // Cancels the stream (its stuck write then fails, and close() can finish it). Its own
  // lock keeps the context alive (OnDone waits for it) and is recursive because gRPC may
  // run reactions (OnCancel, which closes this outbox) inside TryCancel.
  void cancel() {
    std::lock_guard<std::recursive_mutex> lock(cancel_mutex_);
    if (!context_gone_) context_->TryCancel();
  }

  // Seconds the write in flight has been waiting (0 when none).
  double stalled_seconds(Clock::time_point now) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return writing_ ? seconds_between(write_started_, now) : 0;
  }

  WireTraffic sent() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return wire_;
  }

  void on_write_done(bool ok) {
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

  void on_done() {
    {
      std::lock_guard<std::recursive_mutex> lock(cancel_mutex_);
      context_gone_ = true;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }

 private:
  // Starts writing the queue's head (lock held on entry, released on return). Safe
  // without the lock: Finish, the only way to end the reactor, waits for this write.
  void start_next(std::unique_lock<std::mutex>& lock) {
    current_ = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    write_started_ = Clock::now();
    const pb::CoordinatorMessage* m = current_.get();
    lock.unlock();
    reactor_->StartWrite(m);
  }

  Reactor* reactor_;
  grpc::CallbackServerContext* context_;
  std::recursive_mutex cancel_mutex_;  // guards context_gone_
  bool context_gone_ = false;
  mutable std::mutex mutex_;  // guards the rest
  std::deque<Message> queue_;
  Message current_;
  bool writing_ = false, closing_ = false, finished_ = false, broken_ = false, done_ = false;
  grpc::Status status_;
  Clock::time_point write_started_;
  WireTraffic wire_;  // sent only
};

// One session (stream) as the federation sees it. Guarded by State::mutex, except the
// outbox (its own lock) and what is fixed when the session opens.
struct Slot {
  // Fixed at open.
  std::string name;         // certificate CN ("" when it has none)
  std::string tls_cert;     // the TLS peer's leaf certificate (PEM)
  std::string connection;   // the gate's key of its connection
  Clock::time_point opened;
  std::shared_ptr<Outbox> outbox;
  // From the Join.
  int rank = -1;
  std::string public_key;
  std::string certificate, key_signature;  // relayed; the parties check them
  bool joined = false;
  bool gone = false;  // its stream ended (closed, cancelled, refused)
  WireTraffic received;
  std::optional<pb::Finish> finish;
};

}  // namespace

struct Coordinator::State final : public pb::Coordinator::CallbackService {
  CoordinatorOptions options;
  std::optional<RevocationList> crl;
  std::unique_ptr<ConnectionGate> gate;
  std::unique_ptr<grpc::Server> server;

  std::mutex mutex;  // guards everything below
  std::condition_variable cv;
  std::vector<std::shared_ptr<Slot>> waiting;  // opened, no Join accepted yet
  std::vector<std::shared_ptr<Slot>> slots;    // joined: join order; by rank once started
  std::vector<std::string> refused;            // the first kRefusalsLogged
  std::uint64_t refused_total = 0;
  bool started = false, over = false, success = false;
  std::string reason;  // why the federation stopped
  Clock::time_point t_listen, t_first_join, t_done, t_over;
  bool any_joined = false;
  int sessions = 0;  // reactors alive (OnDone not yet run)
  std::atomic<std::uint64_t> connections_cut{0};  // by the gate, without a session (log only)

  // The collective in progress: number `seq`, contributions so far.
  std::uint64_t seq = 1;
  pb::Op op = pb::OP_UNSPECIFIED;
  int root = 0;
  std::vector<std::optional<std::string>> payloads;
  int arrived = 0;
  Clock::time_point first_arrival;
  int finished = 0;
  Clock::time_point first_finish;

  void log(const std::string& line) {
    if (options.log) options.log(line);
  }

  static std::string who(const Slot& s) {
    return s.rank >= 0 ? fmt::format("party '{}' (rank {})", s.name, s.rank)
                       : fmt::format("party '{}'", s.name.empty() ? "(no name)" : s.name);
  }

  // ---- sessions ---------------------------------------------------------------------------

  class PartySession final : public Reactor {
   public:
    PartySession(State* state, grpc::CallbackServerContext* context) : state_(state) {
      slot_ = std::make_shared<Slot>();
      slot_->outbox = std::make_shared<Outbox>(this, context);
      slot_->opened = Clock::now();
      slot_->connection = connection_key_from_grpc_peer(context->peer());
      if (const auto auth = context->auth_context()) {
        // Identity: the subject CN of the verified client certificate (not the SAN, which
        // GetPeerIdentity would return).
        const auto cns = auth->FindPropertyValues("x509_common_name");
        if (!cns.empty()) slot_->name.assign(cns.front().data(), cns.front().size());
        const auto pems = auth->FindPropertyValues("x509_pem_cert");
        if (!pems.empty()) slot_->tls_cert.assign(pems.front().data(), pems.front().size());
      }
      if (state_->admit(slot_)) StartRead(&in_);
    }

    void OnReadDone(bool ok) override {
      if (!ok) {
        state_->on_gone(slot_, "closed its stream");
        return;
      }
      const bool more = state_->on_message(slot_, in_);
      in_.Clear();
      if (more) StartRead(&in_);
    }
    void OnWriteDone(bool ok) override { slot_->outbox->on_write_done(ok); }
    void OnCancel() override { state_->on_gone(slot_, "lost its connection"); }
    void OnDone() override {
      slot_->outbox->on_done();
      state_->on_session_done();
      delete this;
    }

   private:
    State* state_;
    std::shared_ptr<Slot> slot_;
    pb::PartyMessage in_;
  };

  Reactor* Session(grpc::CallbackServerContext* context) override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++sessions;
    }
    return new PartySession(this, context);
  }

  void on_session_done() {
    std::lock_guard<std::mutex> lock(mutex);
    --sessions;
    cv.notify_all();
  }

  // Records and logs a refusal, ends the session with it and closes its connection if no
  // party joined on it. Call without the mutex.
  void refuse(const std::shared_ptr<Slot>& s, grpc::StatusCode code, const std::string& why) {
    std::uint64_t n = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      s->gone = true;
      waiting.erase(std::remove(waiting.begin(), waiting.end(), s), waiting.end());
      n = ++refused_total;
      if (refused.size() < kRefusalsLogged)
        refused.push_back(fmt::format("'{}': {}", s->name.empty() ? "(no name)" : s->name, why));
    }
    if (n <= kRefusalsLogged || n % 100 == 0)
      log(fmt::format("refused {}: {}{}", who(*s), why,
                      n > kRefusalsLogged ? fmt::format(" ({} refusals so far)", n) : ""));
    s->outbox->close({code, why});
    if (gate && !s->connection.empty()) gate->close_soon(s->connection);
  }

  // The checks at stream open, before anything is read. True: read its Join.
  bool admit(const std::shared_ptr<Slot>& s) {
    const std::string& name = s->name;
    if (name.empty()) {
      refuse(s, grpc::StatusCode::UNAUTHENTICATED,
             "the client certificate has no subject CN: a party's identity is its CN");
      return false;
    }
    if (!options.allow.empty() &&
        std::find(options.allow.begin(), options.allow.end(), name) == options.allow.end()) {
      refuse(s, grpc::StatusCode::PERMISSION_DENIED,
             fmt::format("'{}' is not on the coordinator's allow-list (--allow)", name));
      return false;
    }
    try {
      check_extended_key_usage(s->tls_cert, TlsRole::Client, fmt::format("party '{}'", name));
      if (crl) crl->check(s->tls_cert, fmt::format("party '{}'", name));
    } catch (const Error& e) {
      refuse(s, grpc::StatusCode::PERMISSION_DENIED, e.what());
      return false;
    }
    std::string why;
    grpc::StatusCode code = grpc::StatusCode::RESOURCE_EXHAUSTED;
    {
      std::lock_guard<std::mutex> lock(mutex);
      const auto same = [&](const std::shared_ptr<Slot>& o) { return o->name == name; };
      if (over) {
        code = grpc::StatusCode::ABORTED;
        why = reason;
      } else if (started) {
        why = fmt::format("the federation already has its {} parties", options.parties);
      } else if (std::any_of(slots.begin(), slots.end(), same)) {
        code = grpc::StatusCode::ALREADY_EXISTS;
        why = fmt::format("a party named '{}' has already joined", name);
      } else if (std::count_if(waiting.begin(), waiting.end(), same) >= kMaxWaitingSessionsPerName) {
        why = fmt::format("{} sessions of '{}' are already waiting for their Join", kMaxWaitingSessionsPerName, name);
      } else if (options.allow.empty() && waiting.size() >= kMaxWaitingSessions) {
        why = fmt::format("{} sessions are already waiting for their Join (the most without --allow)",
                          waiting.size());
      } else {
        waiting.push_back(s);
        return true;
      }
    }
    refuse(s, code, why);
    return false;
  }

  // The session ended from the party's side (closed, cancelled, connection lost).
  void on_gone(const std::shared_ptr<Slot>& s, const char* how) {
    std::string stop;
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (s->gone) {
        lock.unlock();
        s->outbox->close({grpc::StatusCode::CANCELLED, "the session ended"});
        return;
      }
      s->gone = true;
      if (!s->joined) {
        waiting.erase(std::remove(waiting.begin(), waiting.end(), s), waiting.end());
      } else if (!over && !started) {
        // Left before the federation started: it may come back.
        slots.erase(std::remove(slots.begin(), slots.end(), s), slots.end());
        lock.unlock();
        log(fmt::format("party '{}' left before the federation started", s->name));
      } else if (!over) {
        const std::string where =
            s->finish ? "after finishing"
                      : arrived > 0 ? fmt::format("during collective #{} ({})", seq, op_name(op))
                                    : fmt::format("before collective #{}", seq);
        stop = fmt::format("{} disconnected {} (it {})", who(*s), where, how);
      }
    }
    if (!stop.empty()) abort(stop);
    s->outbox->close({grpc::StatusCode::CANCELLED, "the session ended"});
  }

  // One message of a session (a reaction). False: read no more.
  bool on_message(const std::shared_ptr<Slot>& s, pb::PartyMessage& m) {
    bool joined = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (s->gone) return false;
      s->received.bytes_received += m.ByteSizeLong();
      ++s->received.messages_received;
      joined = s->joined;
    }
    if (!joined) return on_join(s, m);
    if (m.has_contribution()) {
      on_contribution(*s, *m.mutable_contribution());
    } else if (m.has_failure()) {
      abort(fmt::format("{} stopped: {}", who(*s), m.failure().reason()));
    } else if (m.has_finish()) {
      on_finish(*s, m.finish());
    } else {
      abort(fmt::format("{} sent an unexpected message", who(*s)));
    }
    return true;
  }

  bool on_join(const std::shared_ptr<Slot>& s, pb::PartyMessage& first) {
    const auto refuse_now = [&](grpc::StatusCode code, const std::string& why) {
      refuse(s, code, why);
      return false;
    };
    if (!first.has_join()) return refuse_now(grpc::StatusCode::INVALID_ARGUMENT, "the first message was not a join");
    pb::Join& j = *first.mutable_join();
    if (j.protocol() != kGrpcProtocolVersion)
      return refuse_now(grpc::StatusCode::FAILED_PRECONDITION,
                        fmt::format("it speaks session protocol {}, the coordinator {}: every process "
                                    "must run the same flynn release",
                                    j.protocol(), kGrpcProtocolVersion));
    if (j.public_key().size() != 32)
      return refuse_now(grpc::StatusCode::INVALID_ARGUMENT, "its X25519 public key is not 32 bytes");
    if (j.certificate().size() > kMaxJoinCertificateBytes)
      return refuse_now(grpc::StatusCode::INVALID_ARGUMENT,
                        fmt::format("the certificate in its Join is {} bytes, more than the {} allowed",
                                    j.certificate().size(), kMaxJoinCertificateBytes));
    if (j.key_signature().size() > kMaxKeySignatureBytes)
      return refuse_now(grpc::StatusCode::INVALID_ARGUMENT,
                        fmt::format("the key signature in its Join is {} bytes, more than the {} allowed",
                                    j.key_signature().size(), kMaxKeySignatureBytes));
    try {
      check_certificate_pem(j.certificate());
    } catch (const Error& e) {
      return refuse_now(grpc::StatusCode::INVALID_ARGUMENT,
                        fmt::format("the certificate in its Join: {}", e.what()));
    }
    if (!same_certificate(j.certificate(), s->tls_cert))
      return refuse_now(grpc::StatusCode::PERMISSION_DENIED,
                        "the certificate in its Join is not the one it presented in the TLS handshake");

    std::vector<std::pair<std::shared_ptr<Slot>, Message>> welcomes;
    std::string why, start_error;
    grpc::StatusCode code = grpc::StatusCode::RESOURCE_EXHAUSTED;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (over) {
        code = grpc::StatusCode::ABORTED;
        why = reason;
      } else if (started) {
        why = fmt::format("the federation already has its {} parties", options.parties);
      } else if (std::any_of(slots.begin(), slots.end(), [&](const auto& o) { return o->name == s->name; })) {
        code = grpc::StatusCode::ALREADY_EXISTS;
        why = fmt::format("a party named '{}' has already joined", s->name);
      } else {
        s->public_key = std::move(*j.mutable_public_key());
        s->certificate = std::move(*j.mutable_certificate());
        s->key_signature = std::move(*j.mutable_key_signature());
        s->joined = true;
        waiting.erase(std::remove(waiting.begin(), waiting.end(), s), waiting.end());
        slots.push_back(s);
        if (!any_joined) t_first_join = Clock::now();
        any_joined = true;
        log(fmt::format("party '{}' joined ({} of {})", s->name, slots.size(), options.parties));
        if (static_cast<int>(slots.size()) == options.parties) {
          try {
            welcomes = start();
          } catch (const std::exception& e) {
            start_error = e.what();
          }
        }
      }
    }
    if (!why.empty()) return refuse_now(code, why);
    if (gate && !s->connection.empty()) gate->release(s->connection);
    if (!start_error.empty()) abort(start_error);
    for (auto& [slot, m] : welcomes) deliver(*slot, m);
    return true;
  }

  // Queues `m` for one party; a party whose queue is full is not reading: abort naming it.
  void deliver(Slot& s, Message m) {
    if (!s.outbox->send(std::move(m))) {
      abort(fmt::format("{} has not read the coordinator's last {} messages: it stopped reading its "
                        "stream", who(s), kMaxQueuedMessages));
      s.outbox->cancel();
    }
  }

  // Stops the federation (first reason wins) and tells every party why; returns at once.
  void abort(const std::string& why) {
    std::vector<std::shared_ptr<Slot>> joined, pending;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (over) return;
      over = true;
      t_over = Clock::now();
      reason = why;
      joined = slots;
      pending = waiting;
      cv.notify_all();
    }
    log("stopping the federation: " + why);
    auto m = std::make_shared<pb::CoordinatorMessage>();
    m->mutable_abort()->set_reason(why);
    const Message shared = m;
    for (const auto& s : joined) {
      s->outbox->send(shared);
      s->outbox->close({grpc::StatusCode::ABORTED, why});
    }
    for (const auto& s : pending) s->outbox->close({grpc::StatusCode::ABORTED, why});
  }

  // Called with the mutex held once τ parties joined: ranks by sorted name, welcome.
  std::vector<std::pair<std::shared_ptr<Slot>, Message>> start() {
    std::sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
    std::string session(16, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(session.data()), 16) != 1)
      throw Error("OpenSSL RAND_bytes failed");
    pb::Welcome w;
    w.set_parties(static_cast<int>(slots.size()));
    w.set_session_id(session);
    w.set_secure_aggregation(options.secure_aggregation);
    w.set_deadline_seconds(options.deadline_seconds);
    w.set_wants_model(options.wants_model);
    *w.mutable_settings() = to_proto(options.settings);
    for (std::size_t r = 0; r < slots.size(); ++r) {
      slots[r]->rank = static_cast<int>(r);
      w.add_names(slots[r]->name);
      w.add_public_keys(slots[r]->public_key);
      w.add_certificates(slots[r]->certificate);
      w.add_key_signatures(slots[r]->key_signature);
    }
    if (options.tamper_public_keys) {
      std::vector<std::string> keys(w.public_keys().begin(), w.public_keys().end());
      options.tamper_public_keys(keys);
      for (std::size_t r = 0; r < keys.size(); ++r) w.set_public_keys(static_cast<int>(r), keys[r]);
    }
    std::vector<std::pair<std::shared_ptr<Slot>, Message>> out;
    for (const auto& s : slots) {
      auto m = std::make_shared<pb::CoordinatorMessage>();
      *m->mutable_welcome() = w;
      m->mutable_welcome()->set_rank(s->rank);
      out.emplace_back(s, std::move(m));
    }
    payloads.assign(slots.size(), std::nullopt);
    started = true;
    std::string list;
    for (const auto& s : slots) list += fmt::format("{}{} (rank {})", list.empty() ? "" : ", ", s->name, s->rank);
    log(fmt::format("all {} parties joined: {}", slots.size(), list));
    return out;
  }

  // ---- collectives ----------------------------------------------------------------------

  // The result of the complete collective (mutex held). Throws Error on a mismatch.
  Message combine() {
    auto m = std::make_shared<pb::CoordinatorMessage>();
    auto* r = m->mutable_result();
    r->set_seq(seq);
    const int n = static_cast<int>(slots.size());
    if (op == pb::ALLGATHER) {
      for (int p = 0; p < n; ++p) r->add_blocks(std::move(*payloads[p]));
    } else if (op == pb::BROADCAST) {
      r->add_blocks(std::move(*payloads[root]));
    } else {
      const std::size_t word = op == pb::SUM32 ? 4 : 8;
      const std::size_t bytes = payloads[0]->size();
      for (int p = 0; p < n; ++p)
        if (payloads[p]->size() != bytes || bytes % word != 0)
          throw Error(fmt::format("{} sent {} bytes to the {}, {} sent {}", who(*slots[p]),
                                  payloads[p]->size(), op_name(op), who(*slots[0]), bytes));
      const std::size_t count = bytes / word;
      // Sums modulo 2^32 / 2^64, as the parties' masks require.
      if (word == 4) {
        std::vector<std::uint32_t> sum(count, 0), v(count);
        for (int p = 0; p < n; ++p) {
          decode_words<std::uint32_t>(*payloads[p], v);
          for (std::size_t i = 0; i < count; ++i) sum[i] += v[i];
        }
        r->add_blocks(encode_words<std::uint32_t>(sum));
      } else {
        std::vector<std::uint64_t> sum(count, 0), v(count);
        for (int p = 0; p < n; ++p) {
          decode_words<std::uint64_t>(*payloads[p], v);
          for (std::size_t i = 0; i < count; ++i) sum[i] += v[i];
        }
        r->add_blocks(encode_words<std::uint64_t>(sum));
      }
    }
    return m;
  }

  void on_contribution(Slot& me, pb::Contribution& c) {
    if (options.observe) options.observe(me.rank, c.seq(), op_name(c.op()), c.payload());
    std::vector<std::shared_ptr<Slot>> targets;
    Message result;
    std::string stop_reason;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (over) return;
      std::string error;
      if (!started) error = fmt::format("{} sent a collective before the federation started", who(me));
      else if (c.seq() != seq)
        error = fmt::format("{} sent collective #{} while #{} is in progress", who(me), c.seq(), seq);
      else if (payloads[me.rank])
        error = fmt::format("{} contributed twice to collective #{}", who(me), seq);
      else if (arrived > 0 && (c.op() != op || (op == pb::BROADCAST && c.root() != root)))
        error = fmt::format("{} called a {} where the others called a {}: the parties run different "
                            "flynn versions", who(me), op_name(c.op()), op_name(op));
      else if (c.op() == pb::BROADCAST && (c.root() < 0 || c.root() >= static_cast<int>(slots.size())))
        error = fmt::format("{} broadcast from rank {}, which does not exist", who(me), c.root());
      if (error.empty()) {
        if (arrived == 0) {
          op = c.op();
          root = c.root();
          first_arrival = Clock::now();
        }
        payloads[me.rank] = std::move(*c.mutable_payload());
        if (++arrived < static_cast<int>(slots.size())) return;
        try {
          result = combine();
        } catch (const std::exception& e) {
          error = e.what();
        }
      }
      if (error.empty()) {
        ++seq;
        arrived = 0;
        payloads.assign(slots.size(), std::nullopt);
        targets = slots;
      } else {
        stop_reason = std::move(error);
      }
    }
    if (!stop_reason.empty()) {
      abort(stop_reason);
      return;
    }
    for (const auto& s : targets) deliver(*s, result);
  }

  void on_finish(Slot& me, const pb::Finish& f) {
    std::vector<std::shared_ptr<Slot>> targets;
    std::string error;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (over) return;
      if (!started || me.finish) {
        error = fmt::format("{} finished out of turn", who(me));
      } else {
        me.finish = f;
        if (finished++ == 0) first_finish = Clock::now();
        if (finished < static_cast<int>(slots.size())) return;
        const pb::Finish& lead = *slots[0]->finish;
        for (const auto& s : slots)
          if (s->finish->model_crc32() != lead.model_crc32() ||
              s->finish->model_bytes() != lead.model_bytes())
            error = fmt::format("{} holds a different model (crc32 {:08x}) than {} ({:08x})",
                                who(*s), s->finish->model_crc32(), who(*slots[0]), lead.model_crc32());
        if (error.empty() && options.wants_model &&
            (lead.model().size() != lead.model_bytes() ||
             io::model_checksum(lead.model()) != lead.model_crc32()))
          error = fmt::format("{} sent a model file that does not match its checksum", who(*slots[0]));
        if (error.empty()) {
          success = over = true;
          t_done = t_over = Clock::now();
          targets = slots;
          cv.notify_all();
        }
      }
    }
    if (!error.empty()) {
      abort(error);
      return;
    }
    auto done = std::make_shared<pb::CoordinatorMessage>();
    done->mutable_done();
    const Message shared = done;
    for (const auto& s : targets) {
      s->outbox->send(shared);
      s->outbox->close(grpc::Status::OK);
    }
  }

  // ---- the watchdog ----------------------------------------------------------------------

  // Deadline checks (mutex held); returns the abort reason, "" when all is well.
  std::string overdue(Clock::time_point now) const {
    const double d = options.deadline_seconds;
    if (!started && seconds_between(t_listen, now) > d) {
      std::string names;
      for (const auto& s : slots) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", s->name);
      std::string refusals;
      for (const auto& r : refused) refusals += fmt::format("{}{}", refusals.empty() ? "" : "; ", r);
      if (refused_total > refused.size())
        refusals += fmt::format("; and {} more", refused_total - refused.size());
      return fmt::format("only {} of {} parties joined within the deadline of {} s (joined: {}{})",
                         slots.size(), options.parties, d, names.empty() ? "none" : names,
                         refusals.empty() ? "" : "; refused: " + refusals);
    }
    // A party whose write has waited longer than the deadline is not reading (checked
    // first: it is why the collective it holds up is late, too).
    for (const auto& s : slots) {
      const double stalled = s->outbox->stalled_seconds(now);
      if (stalled > d)
        return fmt::format("{} has not read the coordinator's messages for {:.0f} s (more than the "
                           "deadline of {} s): it stopped reading its stream", who(*s), stalled, d);
    }
    if (started && arrived > 0 && seconds_between(first_arrival, now) > d) {
      std::string missing;
      for (const auto& s : slots)
        if (!payloads[s->rank]) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", who(*s));
      return fmt::format("{} did not reach collective #{} ({}) within the deadline of {} s",
                         missing, seq, op_name(op), d);
    }
    if (started && finished > 0 && seconds_between(first_finish, now) > d) {
      std::string missing;
      for (const auto& s : slots)
        if (!s->finish) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", who(*s));
      return fmt::format("{} did not finish within the deadline of {} s", missing, d);
    }
    return "";
  }

  // One watchdog step while the federation runs (mutex not held).
  void watch(Clock::time_point now) {
    std::string why;
    std::vector<std::shared_ptr<Slot>> late, stalled;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (over) return;
      why = overdue(now);
      for (const auto& s : waiting)
        if (seconds_between(s->opened, now) > options.join_timeout_seconds) late.push_back(s);
      if (!why.empty())
        for (const auto& s : slots)
          if (s->outbox->stalled_seconds(now) > options.deadline_seconds) stalled.push_back(s);
    }
    for (const auto& s : late)
      refuse(s, grpc::StatusCode::DEADLINE_EXCEEDED,
             fmt::format("it sent no Join within {} s (--join-timeout)", options.join_timeout_seconds));
    if (!why.empty()) {
      abort(why);
      for (const auto& s : stalled) s->outbox->cancel();
    }
  }

  // The gate is about to close a connection that has not joined: end its sessions first.
  void on_connection_cut(const std::string& key, const std::string& why) {
    std::vector<std::shared_ptr<Slot>> affected;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (const auto& s : waiting)
        if (s->connection == key) affected.push_back(s);
    }
    for (const auto& s : affected) refuse(s, grpc::StatusCode::RESOURCE_EXHAUSTED, why);
    if (affected.empty() && (++connections_cut <= kRefusalsLogged || connections_cut % 100 == 0))
      log(fmt::format("closed the connection from {}: {}{}", key, why,
                      connections_cut > kRefusalsLogged
                          ? fmt::format(" ({} such connections so far)", connections_cut.load())
                          : ""));
  }
};

Coordinator::Coordinator(CoordinatorOptions options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = std::move(options);
  const CoordinatorOptions& o = s.options;
  if (o.parties < 1 || o.parties > 4096)
    throw Error(fmt::format("--parties {}: must be in [1, 4096]", o.parties));
  if (!(o.deadline_seconds > 0))
    throw Error(fmt::format("--deadline {}: must be positive", o.deadline_seconds));
  if (!(o.join_timeout_seconds > 0) || o.join_timeout_seconds > 3600)
    throw Error(fmt::format("--join-timeout {}: must be in (0, 3600] seconds", o.join_timeout_seconds));
  if (o.settings.labels.empty()) throw Error("the federation's label list is empty (give --labels)");
  if (o.listen.empty() || o.listen.find(':') == std::string::npos)
    throw Error(fmt::format("--listen '{}': expected HOST:PORT", o.listen));
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = read_pem(o.tls.ca, "CA certificate (--ca)");
  const std::string cert = read_pem(o.tls.cert, "server certificate (--cert)");
  ssl.pem_key_cert_pairs.push_back({read_pem(o.tls.key, "server private key (--key)"), cert});
  if (!o.crl.empty()) s.crl = RevocationList::load(o.crl, o.tls.ca);
  try {
    check_extended_key_usage(cert, TlsRole::Server, "the coordinator");
  } catch (const Error& e) {
    s.log(fmt::format("warning: {} (parties will refuse it)", e.what()));
  }

  GateLimits limits;
  limits.pre_join_bytes = kPreJoinBytes;
  limits.join_timeout_seconds = o.join_timeout_seconds;
  limits.max_waiting = kMaxWaitingConnections;
  s.gate = std::make_unique<ConnectionGate>(o.listen, limits, o.log);

  grpc::ServerBuilder builder;
  // The gate accepts the connections (grpc_connection_gate.hpp); gRPC listens nowhere.
  auto acceptor = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, grpc::SslServerCredentials(ssl));
  builder.RegisterService(&s);
  builder.SetMaxReceiveMessageSize(static_cast<int>(o.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(o.max_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, kKeepaliveMs / 2);
  // One session per connection: a party needs one stream.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 1);
  // A backstop behind the gate's --join-timeout, which closes such connections first.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             static_cast<int>((o.join_timeout_seconds + 2) * 1000));
  s.server = builder.BuildAndStart();
  if (!s.server)
    throw Error(fmt::format("cannot start the coordinator on {} (a key and certificate that do not "
                            "match?)", o.listen));
  State* raw = &s;
  s.gate->start(std::move(acceptor),
                [raw](const std::string& key, const std::string& why) { raw->on_connection_cut(key, why); });
  s.t_listen = Clock::now();
}

Coordinator::~Coordinator() {
  State& s = *state_;
  if (!s.server) return;
  // End the federation (when run() did not), stop accepting, then let every session end.
  s.abort("the coordinator is shutting down");
  s.gate->stop();
  s.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  std::unique_lock<std::mutex> lock(s.mutex);
  // Shutdown cancelled every call; their reactions end them at once. Should one not
  // (it never has), the state must outlive it rather than be freed under it.
  if (!s.cv.wait_for(lock, std::chrono::seconds(5), [&] { return s.sessions == 0; })) {
    lock.unlock();
    (void)state_.release();
  }
}

int Coordinator::port() const { return state_->gate->port(); }

CoordinatorOutcome Coordinator::run() {
  State& s = *state_;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(s.mutex);
      if (s.over) break;
      s.cv.wait_for(lock, std::chrono::milliseconds(50));
      if (s.over) break;
    }
    s.watch(Clock::now());
  }
  // Let every stream deliver its last message (abort or done); one that cannot within
  // kFlushSeconds (its party stopped reading) is cancelled.
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    const auto give_up = s.t_over + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(kFlushSeconds));
    while (s.sessions > 0 && Clock::now() < give_up)
      s.cv.wait_for(lock, std::chrono::milliseconds(50));
    std::vector<std::shared_ptr<Slot>> all = s.slots;
    all.insert(all.end(), s.waiting.begin(), s.waiting.end());
    lock.unlock();
    for (const auto& slot : all) slot->outbox->cancel();
    lock.lock();
    s.cv.wait_for(lock, std::chrono::seconds(1), [&] { return s.sessions == 0; });
  }
  const GateCounts gate = s.gate->counts();
  s.gate->stop();
  s.server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  std::lock_guard<std::mutex> lock(s.mutex);
  if (gate.cut_bytes + gate.cut_timeout + gate.refused_full + s.refused_total > 0)
    s.log(fmt::format("connections: {} accepted, {} closed for sending too much before their Join, {} "
                      "for not joining in time, {} when {} were already waiting; {} sessions refused; "
                      "at most {} connections waited at once",
                      gate.accepted, gate.cut_bytes, gate.cut_timeout, gate.refused_full,
                      kMaxWaitingConnections, s.refused_total, gate.max_waiting_seen));
  if (!s.success) throw FederationError(s.reason);
  CoordinatorOutcome out;
  for (const auto& slot : s.slots) {
    WireTraffic w = slot->received;
    const WireTraffic sent = slot->outbox->sent();
    w.bytes_sent = sent.bytes_sent;
    w.messages_sent = sent.messages_sent;
    out.parties.push_back({slot->name, slot->rank, w});
  }
  out.refused = s.refused;
  out.refused_total = s.refused_total;
  out.collectives = s.seq - 1;
  const pb::Finish& lead = *s.slots[0]->finish;
  out.model_file = lead.model();
  out.model_crc32 = lead.model_crc32();
  out.model_bytes = lead.model_bytes();
  out.seconds = seconds_between(s.t_first_join, s.t_done);
  return out;
}

}  // namespace flynn::federated
