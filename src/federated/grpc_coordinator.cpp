// The coordinator side of the gRPC backend: a synchronous gRPC server with one handler
// thread per party stream. Handlers only read; results, aborts and the welcome are
// written by whichever thread completes a step, one Write per stream at a time. A
// watchdog (Coordinator::run) enforces the deadlines.
#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/io/model_file.hpp"
#include "grpc_wire.hpp"

namespace flynn::federated {

using namespace grpcwire;
using Clock = std::chrono::steady_clock;
using Stream = grpc::ServerReaderWriter<pb::CoordinatorMessage, pb::PartyMessage>;

namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// One joined party's stream.
struct Slot {
  std::string name;
  int rank = -1;
  std::string public_key;
  std::string certificate, key_signature;  // relayed; the parties check them
  Stream* stream = nullptr;
  std::mutex write_mutex;
  bool writable = true;  // false once its handler returned
  WireTraffic wire;      // guarded by State::mutex (received) / write_mutex (sent)
  std::optional<pb::Finish> finish;
};

}  // namespace

struct Coordinator::State final : public pb::Coordinator::Service {
  CoordinatorOptions options;
  std::unique_ptr<grpc::Server> server;
  int port = 0;

  std::mutex mutex;  // guards everything below
  std::condition_variable cv;
  std::vector<std::shared_ptr<Slot>> slots;  // join order; by rank once started
  std::vector<std::string> refused;
  bool started = false, over = false, success = false;
  std::string reason;  // why the federation stopped
  Clock::time_point t_listen, t_first_join, t_done;
  bool any_joined = false;
  int handlers = 0;

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

  std::string who(const Slot& s) const {
    return s.rank >= 0 ? fmt::format("party '{}' (rank {})", s.name, s.rank)
                       : fmt::format("party '{}'", s.name);
  }

  // Sends `m` on one stream (any thread; one writer at a time per stream).
  static void send(Slot& s, const pb::CoordinatorMessage& m) {
    std::lock_guard<std::mutex> lock(s.write_mutex);
    if (!s.writable) return;
    if (s.stream->Write(m)) {
      s.wire.bytes_sent += m.ByteSizeLong();
      ++s.wire.messages_sent;
    }
  }

  // Stops the federation (first reason wins) and tells every joined party why.
  void abort(const std::string& why) {
    std::vector<std::shared_ptr<Slot>> targets;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (over) return;
      over = true;
      reason = why;
      targets = slots;
      cv.notify_all();
    }
    log("stopping the federation: " + why);
    pb::CoordinatorMessage m;
    m.mutable_abort()->set_reason(why);
    for (const auto& s : targets) send(*s, m);
  }

  grpc::Status refuse(const std::string& name, grpc::StatusCode code, const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      refused.push_back(fmt::format("'{}': {}", name, why));
    }
    log(fmt::format("refused party '{}': {}", name, why));
    return {code, why};
  }

  // Called with the mutex held once τ parties joined: ranks by sorted name, welcome.
  std::vector<std::pair<std::shared_ptr<Slot>, pb::CoordinatorMessage>> start() {
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
    std::vector<std::pair<std::shared_ptr<Slot>, pb::CoordinatorMessage>> out;
    for (const auto& s : slots) {
      pb::CoordinatorMessage m;
      *m.mutable_welcome() = w;
      m.mutable_welcome()->set_rank(s->rank);
      out.emplace_back(s, std::move(m));
    }
    payloads.assign(slots.size(), std::nullopt);
    started = true;
    std::string list;
    for (const auto& s : slots) list += fmt::format("{}{} (rank {})", list.empty() ? "" : ", ", s->name, s->rank);
    log(fmt::format("all {} parties joined: {}", slots.size(), list));
    return out;
  }

  // The result of the complete collective (mutex held). Throws Error on a mismatch.
  pb::CoordinatorMessage combine() {
    pb::CoordinatorMessage m;
    auto* r = m.mutable_result();
    r->set_seq(seq);
    const int n = static_cast<int>(slots.size());
    if (op == pb::ALLGATHER) {
      for (int p = 0; p < n; ++p) r->add_blocks(*payloads[p]);
    } else if (op == pb::BROADCAST) {
      r->add_blocks(*payloads[root]);
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

  void on_contribution(Slot& me, const pb::Contribution& c) {
    if (options.observe) options.observe(me.rank, c.seq(), op_name(c.op()), c.payload());
    std::vector<std::shared_ptr<Slot>> targets;
    pb::CoordinatorMessage result;
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
        payloads[me.rank] = c.payload();
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
      abort(stop_reason);  // takes the mutex itself
      return;
    }
    for (const auto& s : targets) send(*s, result);
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
          t_done = Clock::now();
          targets = slots;
          cv.notify_all();
        }
      }
    }
    if (!error.empty()) {
      abort(error);
      return;
    }
    pb::CoordinatorMessage done;
    done.mutable_done();
    for (const auto& s : targets) send(*s, done);
  }

  grpc::Status Session(grpc::ServerContext* context, Stream* stream) override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++handlers;
    }
    struct Leave {
      State* s;
      ~Leave() {
        std::lock_guard<std::mutex> lock(s->mutex);
        --s->handlers;
        s->cv.notify_all();
      }
    } leave{this};

    // Identity: the subject CN of the verified client certificate (not the SAN, which
    // GetPeerIdentity would return).
    std::string name;
    const auto auth = context->auth_context();
    if (auth) {
      const auto cns = auth->FindPropertyValues("x509_common_name");
      if (!cns.empty()) name.assign(cns.front().data(), cns.front().size());
    }
    if (name.empty())
      return refuse("(no name)", grpc::StatusCode::UNAUTHENTICATED,
                    "the client certificate has no subject CN: a party's identity is its CN");
    if (!options.allow.empty() &&
        std::find(options.allow.begin(), options.allow.end(), name) == options.allow.end())
      return refuse(name, grpc::StatusCode::PERMISSION_DENIED,
                    fmt::format("'{}' is not on the coordinator's allow-list (--allow)", name));

    pb::PartyMessage first;
    if (!stream->Read(&first)) return {grpc::StatusCode::CANCELLED, "no join message"};
    if (!first.has_join())
      return refuse(name, grpc::StatusCode::INVALID_ARGUMENT, "the first message was not a join");
    if (first.join().protocol() != kGrpcProtocolVersion)
      return refuse(name, grpc::StatusCode::FAILED_PRECONDITION,
                    fmt::format("it speaks session protocol {}, the coordinator {}: every "
                                "process must run the same flynn release",
                                first.join().protocol(), kGrpcProtocolVersion));
    if (first.join().public_key().size() != 32)
      return refuse(name, grpc::StatusCode::INVALID_ARGUMENT, "its X25519 public key is not 32 bytes");

    auto me = std::make_shared<Slot>();
    me->name = name;
    me->public_key = first.join().public_key();
    me->certificate = first.join().certificate();
    me->key_signature = first.join().key_signature();
    me->stream = stream;
    me->wire.bytes_received += first.ByteSizeLong();
    ++me->wire.messages_received;
    std::vector<std::pair<std::shared_ptr<Slot>, pb::CoordinatorMessage>> welcomes;
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (over) return {grpc::StatusCode::ABORTED, reason};
      bool duplicate = false;
      for (const auto& s : slots) duplicate |= s->name == name;
      if (started) {
        lock.unlock();
        return refuse(name, grpc::StatusCode::RESOURCE_EXHAUSTED,
                      fmt::format("the federation already has its {} parties", options.parties));
      }
      if (duplicate) {
        lock.unlock();
        return refuse(name, grpc::StatusCode::ALREADY_EXISTS,
                      fmt::format("a party named '{}' has already joined", name));
      }
      slots.push_back(me);
      if (!any_joined) t_first_join = Clock::now();
      any_joined = true;
      log(fmt::format("party '{}' joined ({} of {})", name, slots.size(), options.parties));
      if (static_cast<int>(slots.size()) == options.parties) {
        try {
          welcomes = start();
        } catch (const std::exception& e) {
          lock.unlock();
          abort(e.what());
        }
      }
    }
    for (auto& [slot, m] : welcomes) send(*slot, m);

    pb::PartyMessage m;
    while (stream->Read(&m)) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        me->wire.bytes_received += m.ByteSizeLong();
        ++me->wire.messages_received;
      }
      if (m.has_contribution()) {
        on_contribution(*me, m.contribution());
      } else if (m.has_failure()) {
        abort(fmt::format("{} stopped: {}", who(*me), m.failure().reason()));
      } else if (m.has_finish()) {
        on_finish(*me, m.finish());
      } else {
        abort(fmt::format("{} sent an unexpected message", who(*me)));
      }
      m.Clear();
    }
    // The party closed its stream, or its connection is gone.
    std::unique_lock<std::mutex> lock(mutex);
    if (!over && !started) {
      // Left before the federation started: it may come back.
      slots.erase(std::remove(slots.begin(), slots.end(), me), slots.end());
      lock.unlock();
      log(fmt::format("party '{}' left before the federation started", name));
      std::lock_guard<std::mutex> w(me->write_mutex);
      me->writable = false;
      return {grpc::StatusCode::CANCELLED, "left before the federation started"};
    } else if (!over) {
      const std::string where =
          arrived > 0 ? fmt::format("during collective #{} ({})", seq, op_name(op))
                      : fmt::format("before collective #{}", seq);
      lock.unlock();
      abort(fmt::format("{} disconnected {}", who(*me), me->finish ? "after finishing" : where));
      lock.lock();
    }
    cv.wait(lock, [&] { return over; });
    const bool ok = success;
    const std::string why = reason;
    lock.unlock();
    {
      std::lock_guard<std::mutex> w(me->write_mutex);
      me->writable = false;
    }
    return ok ? grpc::Status::OK : grpc::Status(grpc::StatusCode::ABORTED, why);
  }

  // Deadline checks (mutex held); returns the abort reason, "" when all is well.
  std::string overdue(Clock::time_point now) const {
    const double d = options.deadline_seconds;
    if (!started && seconds_between(t_listen, now) > d) {
      std::string names;
      for (const auto& s : slots) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", s->name);
      std::string refusals;
      for (const auto& r : refused) refusals += fmt::format("{}{}", refusals.empty() ? "" : "; ", r);
      return fmt::format("only {} of {} parties joined within the deadline of {} s (joined: {}{})",
                         slots.size(), options.parties, d, names.empty() ? "none" : names,
                         refusals.empty() ? "" : "; refused: " + refusals);
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
};

Coordinator::Coordinator(CoordinatorOptions options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = std::move(options);
  const CoordinatorOptions& o = s.options;
  if (o.parties < 1 || o.parties > 4096)
    throw Error(fmt::format("--parties {}: must be in [1, 4096]", o.parties));
  if (!(o.deadline_seconds > 0))
    throw Error(fmt::format("--deadline {}: must be positive", o.deadline_seconds));
  if (o.settings.labels.empty()) throw Error("the federation's label list is empty (give --labels)");
  if (o.listen.empty() || o.listen.find(':') == std::string::npos)
    throw Error(fmt::format("--listen '{}': expected HOST:PORT", o.listen));
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = read_pem(o.tls.ca, "CA certificate (--ca)");
  ssl.pem_key_cert_pairs.push_back({read_pem(o.tls.key, "server private key (--key)"),
                                    read_pem(o.tls.cert, "server certificate (--cert)")});
  grpc::ServerBuilder builder;
  builder.AddListeningPort(o.listen, grpc::SslServerCredentials(ssl), &s.port);
  builder.RegisterService(&s);
  builder.SetMaxReceiveMessageSize(static_cast<int>(o.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(o.max_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, kKeepaliveMs / 2);
  s.server = builder.BuildAndStart();
  if (!s.server || s.port == 0)
    throw Error(fmt::format("cannot listen on {} (address not available, port in use, or key and "
                            "certificate that do not match)", o.listen));
  s.t_listen = Clock::now();
}

Coordinator::~Coordinator() {
  if (!state_->server) return;
  // Handlers wait for the end of the federation: end it (when run() did not) so that
  // Shutdown can complete.
  state_->abort("the coordinator is shutting down");
  state_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

int Coordinator::port() const { return state_->port; }

CoordinatorOutcome Coordinator::run() {
  State& s = *state_;
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    while (!s.over) {
      const std::string why = s.overdue(Clock::now());
      if (!why.empty()) {
        lock.unlock();
        s.abort(why);
        lock.lock();
        break;
      }
      s.cv.wait_for(lock, std::chrono::milliseconds(50));
    }
    // Let the handlers deliver the last message and see their parties close (bounded:
    // a party busy counting closes only when it next talks to us).
    s.cv.wait_for(lock, std::chrono::seconds(3), [&] { return s.handlers == 0; });
  }
  s.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.success) throw FederationError(s.reason);
  CoordinatorOutcome out;
  for (const auto& slot : s.slots) out.parties.push_back({slot->name, slot->rank, slot->wire});
  out.refused = s.refused;
  out.collectives = s.seq - 1;
  const pb::Finish& lead = *s.slots[0]->finish;
  out.model_file = lead.model();
  out.model_crc32 = lead.model_crc32();
  out.model_bytes = lead.model_bytes();
  out.seconds = seconds_between(s.t_first_join, s.t_done);
  return out;
}

}  // namespace flynn::federated
