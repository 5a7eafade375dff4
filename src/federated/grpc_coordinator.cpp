// The coordinator side of the gRPC backend, on gRPC's callback API: no thread per stream,
// and nothing a party does (or fails to do) can block the coordinator. Its parts:
//
//   * the gate (grpc_connection_gate.hpp) bounds what a connection may send and how long
//     it may live before its Join is accepted;
//   * the verifier (grpc_party_verifier.hpp) checks a party's certificate in the TLS
//     handshake and names the cause and the CN of what it refuses;
//   * the roster (grpc_roster.hpp) admits streams, checks identities and Joins
//     (grpc_join_check.hpp), and makes the Welcomes;
//   * the collective step (grpc_collective_step.hpp) takes one contribution per party,
//     checked as it arrives, and makes each Result;
//   * every stream writes through its own outbox (grpc_outbox.hpp): a bounded queue with
//     one write in flight, so a party that stops reading stalls only its own stream;
//   * the watchdog (Coordinator::run, overdue) aborts the federation naming whoever is
//     late, and cancels a stream whose write is older than the deadline; before the start
//     it also stops it once it can no longer begin (cannot_start, lost_for_good);
// and this file, which wires them to gRPC's reactions. Reactions (reads, write
// completions, cancellations) only take short locks. Lock order: State::mutex, then an
// outbox's or the gate's; no gRPC call is made while State::mutex is held. Text that comes from a party
// (a failure's reason, a CN) is escaped, cut and marked as that party's before it is
// logged or relayed (relayed_text.hpp).
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "federated/grpc_collective_step.hpp"
#include "federated/grpc_join_check.hpp"
#include "federated/grpc_party_verifier.hpp"
#include "federated/grpc_roster.hpp"
#include "federated/openssl_util.hpp"
#include "federated/relayed_text.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/io/model_file.hpp"
#include "grpc_connection_gate.hpp"
#include "grpc_wire.hpp"

namespace flynn::federated {

using namespace grpcwire;
using Clock = std::chrono::steady_clock;

namespace {

// After the federation ended: how long a stream may take to deliver its last message.
constexpr double kFlushSeconds = 2;
// A model file holds the counts varint-coded (at most 1.25 × their sum's bytes) plus the
// header, label list and table: at most twice the largest sum relayed plus this.
constexpr std::size_t kModelSlackBytes = std::size_t{16} << 20;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

grpc::StatusCode status_of(JoinRefusal::Kind k) {
  switch (k) {
    case JoinRefusal::Kind::FailedPrecondition: return grpc::StatusCode::FAILED_PRECONDITION;
    case JoinRefusal::Kind::PermissionDenied: return grpc::StatusCode::PERMISSION_DENIED;
    default: return grpc::StatusCode::INVALID_ARGUMENT;
  }
}

}  // namespace

struct Coordinator::State final : public pb::Coordinator::CallbackService {
  CoordinatorOptions options;
  std::optional<RevocationList> crl;
  std::shared_ptr<HandshakeRefusals> handshake_refusals;  // the TLS verifier's log
  std::unique_ptr<ConnectionGate> gate;
  std::unique_ptr<grpc::Server> server;

  std::mutex mutex;  // guards everything below
  std::condition_variable cv;
  std::optional<Roster> roster;
  std::optional<CollectiveStep> step;  // once the federation started
  bool started = false, over = false, success = false;
  std::string reason;  // why the federation stopped
  Clock::time_point t_listen, t_first_join, t_done, t_over, first_finish;
  bool any_joined = false;
  int finished = 0;
  int calls = 0;  // reactors alive (OnDone not yet run)
  // Before the start, what tells that the federation can no longer begin (watch, admit):
  std::vector<std::string> left;  // parties that joined and then left (CNs, first leave order)
  std::set<std::string> lost;     // names of --allow refused for good (Refusal::permanent)
  std::atomic<std::uint64_t> connections_cut{0};  // by the gate, without a stream (log only)

  void log(const std::string& line) {
    if (options.log) options.log(line);
  }

  PartyReactor* Federate(grpc::CallbackServerContext* context) override;
  void on_call_done();
  bool admit(const std::shared_ptr<Slot>& s);
  void refuse(const std::shared_ptr<Slot>& s, const Refusal& r);
  void on_gone(const std::shared_ptr<Slot>& s, const char* how);
  bool on_message(const std::shared_ptr<Slot>& s, pb::PartyMessage& m);
  bool on_join(const std::shared_ptr<Slot>& s, pb::PartyMessage& first);
  std::vector<std::pair<std::shared_ptr<Slot>, SharedMessage>> start();
  void deliver(Slot& s, SharedMessage m);
  void abort(const std::string& why);
  void on_contribution(Slot& me, pb::Contribution& c);
  void on_finish(Slot& me, const pb::Finish& f);
  std::string finish_error() const;
  std::string overdue(Clock::time_point now) const;
  void watch(Clock::time_point now);
  std::string cannot_start() const;
  std::string lost_for_good(const Slot& s, const Refusal& r);
  void on_connection_cut(const std::string& key, const std::string& why);
  CoordinatorOutcome outcome() const;
};

namespace {

// One party's stream: gRPC's reactions, passed on to the State.
class PartyCall final : public PartyReactor {
 public:
  PartyCall(Coordinator::State* state, grpc::CallbackServerContext* context) : state_(state) {
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
    state_->on_call_done();
    delete this;
  }

 private:
  Coordinator::State* state_;
  std::shared_ptr<Slot> slot_;
  pb::PartyMessage in_;
};

}  // namespace

PartyReactor* Coordinator::State::Federate(grpc::CallbackServerContext* context) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    ++calls;
  }
  return new PartyCall(this, context);
}

void Coordinator::State::on_call_done() {
  std::lock_guard<std::mutex> lock(mutex);
  --calls;
  cv.notify_all();
}

// Records and logs a refusal, ends the stream with it and closes its connection if no
// party joined on it. Call without the mutex.
void Coordinator::State::refuse(const std::shared_ptr<Slot>& s, const Refusal& r) {
  std::uint64_t n = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    n = roster->refuse(s, r.why);
  }
  if (n <= Roster::kRefusalsLogged || n % 100 == 0)
    log(fmt::format("refused {}: {}{}", who(*s), r.why,
                    n > Roster::kRefusalsLogged ? fmt::format(" ({} refusals so far)", n) : ""));
  s->outbox->close({r.code, r.why});
  if (gate && !s->connection.empty()) gate->close_soon(s->connection);
}

// The checks when a stream opens, before anything is read. True: read its Join.
bool Coordinator::State::admit(const std::shared_ptr<Slot>& s) {
  std::optional<Refusal> no = identity_refusal(*s, options.allow, crl ? &*crl : nullptr);
  std::string stop;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!no) no = over ? std::optional<Refusal>(Refusal{grpc::StatusCode::ABORTED, reason}) : roster->admit(s);
    else if (no->permanent) stop = lost_for_good(*s, *no);
  }
  if (!no) return true;
  refuse(s, *no);
  // The refused party hears its own reason first; the others then hear why it is over.
  if (!stop.empty()) abort(stop);
  return false;
}

// The stream ended from the party's side (closed, cancelled, connection lost).
void Coordinator::State::on_gone(const std::shared_ptr<Slot>& s, const char* how) {
  std::string stop;
  {
    std::unique_lock<std::mutex> lock(mutex);
    if (!s->gone) {
      s->gone = true;
      if (!s->joined || (!over && !started)) {
        roster->leave(s);  // before the federation started: it may come back
        if (s->joined && std::find(left.begin(), left.end(), s->name) == left.end()) left.push_back(s->name);
        if (s->joined) {
          lock.unlock();
          log(fmt::format("{} left before the federation started", who(*s)));
        }
      } else if (!over) {
        const std::string where = s->finish ? "after finishing"
                                  : step->in_progress() ? "during collective " + step->describe()
                                                        : fmt::format("before collective #{}", step->seq());
        stop = fmt::format("{} disconnected {} (it {})", who(*s), where, how);
      }
    }
  }
  if (!stop.empty()) abort(stop);
  s->outbox->close({grpc::StatusCode::CANCELLED, "the stream ended"});
}

// One message of a stream (a reaction). False: read no more.
bool Coordinator::State::on_message(const std::shared_ptr<Slot>& s, pb::PartyMessage& m) {
  bool joined = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (s->gone) return false;
    s->received.bytes_received += m.ByteSizeLong();
    ++s->received.messages_received;
    joined = s->joined;
  }
  if (!joined) return on_join(s, m);
  if (m.has_contribution()) on_contribution(*s, *m.mutable_contribution());
  else if (m.has_failure()) abort(fmt::format("{} stopped the federation: {}", who(*s), relayed_from("it", m.failure().reason())));
  else if (m.has_finish()) on_finish(*s, m.finish());
  else abort(fmt::format("{} sent an unexpected message", who(*s)));
  return true;
}

bool Coordinator::State::on_join(const std::shared_ptr<Slot>& s, pb::PartyMessage& first) {
  if (const auto bad = check_join(first, s->tls_cert)) {
    refuse(s, {status_of(bad->kind), bad->why});
    return false;
  }
  std::vector<std::pair<std::shared_ptr<Slot>, SharedMessage>> welcomes;
  std::optional<Refusal> no;
  std::string start_error;
  {
    std::lock_guard<std::mutex> lock(mutex);
    no = over ? std::optional<Refusal>(Refusal{grpc::StatusCode::ABORTED, reason})
              : roster->join(s, *first.mutable_join());
    if (!no) {
      if (!any_joined) t_first_join = Clock::now();
      any_joined = true;
      log(fmt::format("{} joined ({} of {})", who(*s), roster->joined().size(), options.parties));
      if (roster->complete()) {
        try {
          welcomes = start();
        } catch (const std::exception& e) {
          start_error = e.what();
        }
      }
    }
  }
  if (no) {
    refuse(s, *no);
    return false;
  }
  if (gate && !s->connection.empty()) gate->release(s->connection);
  if (!start_error.empty()) abort(start_error);
  for (auto& [slot, m] : welcomes) deliver(*slot, m);
  return true;
}

// Called with the mutex held once τ parties joined: ranks by sorted name, Welcomes.
std::vector<std::pair<std::shared_ptr<Slot>, SharedMessage>> Coordinator::State::start() {
  std::string id(16, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(id.data()), 16) != 1) throw Error("OpenSSL RAND_bytes failed");
  pb::Welcome w;
  w.set_federation_id(id);
  w.set_secure_aggregation(options.secure_aggregation);
  w.set_deadline_seconds(options.deadline_seconds);
  w.set_wants_model(options.wants_model);
  *w.mutable_settings() = to_proto(options.settings);
  auto welcomes = roster->welcome(std::move(w));
  if (options.tamper_public_keys) {
    std::vector<std::string> keys;
    for (const auto& [slot, m] : welcomes) keys.push_back(slot->public_key);
    options.tamper_public_keys(keys);
    for (auto& entry : welcomes) {
      auto edited = std::make_shared<pb::CoordinatorMessage>(*entry.second);
      for (std::size_t r = 0; r < keys.size(); ++r) edited->mutable_welcome()->set_public_keys(static_cast<int>(r), keys[r]);
      entry.second = edited;
    }
  }
  step.emplace(options.parties, options.max_message_bytes, [this](int r) { return who(*roster->joined()[r]); });
  started = true;
  std::string list;
  for (const auto& s : roster->joined()) list += fmt::format("{}{}", list.empty() ? "" : ", ", who(*s));
  log(fmt::format("all {} parties joined: {}", roster->joined().size(), list));
  return welcomes;
}

// Queues `m` for one party; a party whose queue is full is not reading: abort naming it.
void Coordinator::State::deliver(Slot& s, SharedMessage m) {
  if (!s.outbox->send(std::move(m))) {
    abort(fmt::format("{} has not read the coordinator's last {} messages: it stopped reading its stream", who(s),
                      kMaxQueuedMessages));
    s.outbox->cancel();
  }
}

// Stops the federation (first reason wins) and tells every party why; returns at once.
void Coordinator::State::abort(const std::string& why) {
  std::vector<std::shared_ptr<Slot>> joined, pending;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (over) return;
    over = true;
    t_over = Clock::now();
    reason = why;
    joined = roster->joined();
    pending = roster->waiting();
    cv.notify_all();
  }
  log("stopping the federation: " + why);
  auto m = std::make_shared<pb::CoordinatorMessage>();
  m->mutable_abort()->set_reason(why);
  const SharedMessage shared = m;
  for (const auto& s : joined) {
    s->outbox->send(shared);
    s->outbox->close({grpc::StatusCode::ABORTED, why});
  }
  for (const auto& s : pending) s->outbox->close({grpc::StatusCode::ABORTED, why});
}

void Coordinator::State::on_contribution(Slot& me, pb::Contribution& c) {
  if (options.observe) options.observe(me.rank, c.seq(), op_name(c.op()), c.payload());
  CollectiveStep::Outcome done;
  std::vector<std::shared_ptr<Slot>> targets;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (over) return;
    if (!started) done.error = fmt::format("{} sent a collective before the federation started", who(me));
    else done = step->take(me.rank, c);
    if (done.result) targets = roster->joined();
  }
  if (!done.error.empty()) abort(done.error);
  for (const auto& s : targets) deliver(*s, done.result);
}

void Coordinator::State::on_finish(Slot& me, const pb::Finish& f) {
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
      if (finished < options.parties) return;
      error = finish_error();
      if (error.empty()) {
        success = over = true;
        t_done = t_over = Clock::now();
        targets = roster->joined();
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
  const SharedMessage shared = done;
  for (const auto& s : targets) {
    s->outbox->send(shared);
    s->outbox->close(grpc::Status::OK);
  }
}

// Every party finished (mutex held): the same model everywhere, and rank 0's file (when
// asked for) of the size the relayed sums allow and matching its checksum.
std::string Coordinator::State::finish_error() const {
  const auto& slots = roster->joined();
  const pb::Finish& lead = *slots[0]->finish;
  for (const auto& s : slots)
    if (s->finish->model_crc32() != lead.model_crc32() || s->finish->model_bytes() != lead.model_bytes())
      return fmt::format("{} holds a different model (crc32 {:08x}) than {} ({:08x})", who(*s),
                         s->finish->model_crc32(), who(*slots[0]), lead.model_crc32());
  if (!options.wants_model) return "";
  const std::size_t sums = step->largest_sum_bytes();
  const std::size_t bound = sums == 0 ? options.max_message_bytes : 2 * sums + kModelSlackBytes;
  if (lead.model().size() > bound)
    return fmt::format("{} sent a model file of {} bytes, more than the {} the federation's sums allow", who(*slots[0]),
                       lead.model().size(), bound);
  if (lead.model().size() != lead.model_bytes() || io::model_checksum(lead.model()) != lead.model_crc32())
    return fmt::format("{} sent a model file that does not match its checksum", who(*slots[0]));
  return "";
}

// ---- the watchdog ----------------------------------------------------------------------

// Deadline checks (mutex held); returns the abort reason, "" when all is well.
std::string Coordinator::State::overdue(Clock::time_point now) const {
  const double d = options.deadline_seconds;
  if (!started) return seconds_between(t_listen, now) > d ? roster->missing_text(d) : "";
  // A party whose write has waited longer than the deadline is not reading (checked
  // first: it is why the collective it holds up is late, too).
  for (const auto& s : roster->joined()) {
    const double stalled = s->outbox->stalled_seconds(now);
    if (stalled > d)
      return fmt::format("{} has not read the coordinator's messages for {:.0f} s (more than the deadline of {} s): it "
                         "stopped reading its stream", who(*s), stalled, d);
  }
  std::string missing;
  if (step->in_progress() && seconds_between(step->first_arrival(), now) > d) {
    for (const auto& s : roster->joined())
      if (!step->contributed(s->rank)) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", who(*s));
    return fmt::format("{} did not reach collective {} within the deadline of {} s", missing, step->describe(), d);
  }
  if (finished > 0 && seconds_between(first_finish, now) > d) {
    for (const auto& s : roster->joined())
      if (!s->finish) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", who(*s));
    return fmt::format("{} did not finish within the deadline of {} s", missing, d);
  }
  return "";
}

// One watchdog step while the federation runs (mutex not held).
void Coordinator::State::watch(Clock::time_point now) {
  std::string why;
  std::vector<std::shared_ptr<Slot>> late, stalled;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (over) return;
    why = overdue(now);
    if (why.empty()) why = cannot_start();
    for (const auto& s : roster->waiting())
      if (seconds_between(s->opened, now) > options.join_timeout_seconds) late.push_back(s);
    if (!why.empty())
      for (const auto& s : roster->joined())
        if (s->outbox->stalled_seconds(now) > options.deadline_seconds) stalled.push_back(s);
  }
  for (const auto& s : late)
    refuse(s, {grpc::StatusCode::DEADLINE_EXCEEDED,
               fmt::format("it sent no Join within {} s (--join-timeout)", options.join_timeout_seconds)});
  if (!why.empty()) {
    abort(why);
    for (const auto& s : stalled) s->outbox->cancel();
  }
}

// Before the start (mutex held): "" while the federation may still begin. Once a party
// joined, waiting is for the others to come; when every party that joined has left and no
// one else is connected — no stream, no connection at the gate — there is nobody left to
// wait with, so the coordinator stops rather than wait out its deadline. A party never
// seen is not counted as gone: until one joined, the coordinator waits for its deadline.
std::string Coordinator::State::cannot_start() const {
  if (started || left.empty() || !roster->joined().empty() || !roster->waiting().empty()) return "";
  if (gate && gate->counts().waiting > 0) return "";
  std::string names;
  for (const auto& n : left) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", inert_text(n, 100));
  return fmt::format("every party that joined left before the federation started ({}), and no other party is "
                     "connected", names);
}

// `s` was refused for good (mutex held): when it is one of the names of --allow (the
// kit's parties), fewer may ever join; once fewer than τ can, the federation can never
// start. Returns the reason to stop, "" while it still may start. Without --allow any
// certificate of the CA may take the place, so nothing is concluded.
std::string Coordinator::State::lost_for_good(const Slot& s, const Refusal& r) {
  if (started || over || options.allow.empty()) return "";
  const std::set<std::string> allowed(options.allow.begin(), options.allow.end());
  if (!allowed.count(s.name)) return "";
  lost.insert(s.name);
  const int can_join = static_cast<int>(allowed.size() - lost.size());
  if (can_join >= options.parties) return "";
  std::string names;
  for (const auto& n : allowed) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", inert_text(n, 100));
  return fmt::format("{}; it can never join, so at most {} of the parties allowed ({}) can, and the federation "
                     "needs {}", r.why, can_join, names, options.parties);
}

// The gate is about to close a connection that has not joined: end its streams first.
void Coordinator::State::on_connection_cut(const std::string& key, const std::string& why) {
  std::vector<std::shared_ptr<Slot>> affected;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& s : roster->waiting())
      if (s->connection == key) affected.push_back(s);
  }
  for (const auto& s : affected) refuse(s, {grpc::StatusCode::RESOURCE_EXHAUSTED, why});
  if (affected.empty() && (++connections_cut <= Roster::kRefusalsLogged || connections_cut % 100 == 0))
    log(fmt::format("closed the connection from {}: {}{}", key, why,
                    connections_cut > Roster::kRefusalsLogged
                        ? fmt::format(" ({} such connections so far)", connections_cut.load())
                        : ""));
}

// What a successful federation leaves (mutex held).
CoordinatorOutcome Coordinator::State::outcome() const {
  CoordinatorOutcome out;
  for (const auto& slot : roster->joined()) {
    WireTraffic w = slot->received;
    const WireTraffic sent = slot->outbox->sent();
    w.bytes_sent = sent.bytes_sent;
    w.messages_sent = sent.messages_sent;
    out.parties.push_back({slot->name, slot->rank, w});
  }
  out.refused = roster->refused();
  out.refused_total = roster->refused_total();
  out.collectives = step->seq() - 1;
  const pb::Finish& lead = *roster->joined()[0]->finish;
  out.model_file = lead.model();
  out.model_crc32 = lead.model_crc32();
  out.model_bytes = lead.model_bytes();
  out.seconds = seconds_between(t_first_join, t_done);
  return out;
}

namespace {

// Mutual TLS: the server's certificate and key; the client's certificate is required by TLS
// and verified by flynn's own verifier (grpc_party_verifier.hpp: the same verification as
// OpenSSL's built-in one, which could not say why it refused a party, nor whom).
std::shared_ptr<grpc::ServerCredentials> server_credentials(const std::string& ca, const std::string& cert,
                                                            const std::string& key,
                                                            std::shared_ptr<HandshakeRefusals> refusals) {
  namespace gx = grpc::experimental;
  auto provider = std::make_shared<gx::StaticDataCertificateProvider>(
      ca, std::vector<gx::IdentityKeyCertPair>{gx::IdentityKeyCertPair{key, cert}});
  gx::TlsServerCredentialsOptions tls(provider);
  tls.watch_root_certs();  // the CA names sent in the CertificateRequest
  tls.watch_identity_key_cert_pairs();
  tls.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_BUT_DONT_VERIFY);
  tls.set_certificate_verifier(party_certificate_verifier(ca, std::move(refusals)));
  return gx::TlsServerCredentials(tls);
}

std::unique_ptr<grpc::Server> build_server(Coordinator::State& s, std::shared_ptr<grpc::ServerCredentials> credentials,
                                           std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor>& acceptor) {
  const CoordinatorOptions& o = s.options;
  grpc::ServerBuilder builder;
  // The gate accepts the connections (grpc_connection_gate.hpp); gRPC listens nowhere.
  acceptor = builder.experimental().AddExternalConnectionAcceptor(
      grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, std::move(credentials));
  builder.RegisterService(&s);
  builder.SetMaxReceiveMessageSize(static_cast<int>(o.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(o.max_message_bytes));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, kKeepaliveMs / 2);
  // One stream per connection: a party needs one.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 1);
  // A backstop behind the gate's --join-timeout, which closes such connections first.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, static_cast<int>((o.join_timeout_seconds + 2) * 1000));
  return builder.BuildAndStart();
}

void check_options(const CoordinatorOptions& o) {
  if (o.parties < 1 || o.parties > 4096) throw Error(fmt::format("--parties {}: must be in [1, 4096]", o.parties));
  if (!(o.deadline_seconds > 0)) throw Error(fmt::format("--deadline {}: must be positive", o.deadline_seconds));
  if (!(o.join_timeout_seconds > 0) || o.join_timeout_seconds > 3600)
    throw Error(fmt::format("--join-timeout {}: must be in (0, 3600] seconds", o.join_timeout_seconds));
  if (o.settings.labels.empty()) throw Error("the federation's label list is empty (give --labels)");
  if (o.listen.empty() || o.listen.find(':') == std::string::npos)
    throw Error(fmt::format("--listen '{}': expected HOST:PORT", o.listen));
}

}  // namespace

Coordinator::Coordinator(CoordinatorOptions options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = std::move(options);
  const CoordinatorOptions& o = s.options;
  check_options(o);
  s.roster.emplace(o.parties, o.allow.empty());
  const std::string ca = read_pem(o.tls.ca, "CA certificate (--ca)");
  const std::string cert = read_pem(o.tls.cert, "server certificate (--cert)");
  const std::string key = read_pem(o.tls.key, "server private key (--key)");
  if (ossl::read_certificates(ca).empty())
    throw Error(fmt::format("--ca {}: holds no PEM X.509 certificate", o.tls.ca));
  // gRPC's TLS credentials would only fail at the first handshake: check the pair now.
  {
    const ossl::Cert c = ossl::first_certificate(cert);
    if (!c) throw Error(fmt::format("--cert {}: not a PEM X.509 certificate", o.tls.cert));
    ossl::Bio bio = ossl::memory(key);
    const ossl::Key k(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
    if (!k) throw Error(fmt::format("--key {}: not an unencrypted PEM private key", o.tls.key));
    if (X509_check_private_key(c.get(), k.get()) != 1)
      throw Error(fmt::format("--key {} is not the key of the certificate --cert {}", o.tls.key, o.tls.cert));
  }
  if (!o.crl.empty()) s.crl = RevocationList::load(o.crl, o.tls.ca);
  try {
    check_extended_key_usage(cert, TlsRole::Server, "the coordinator");
  } catch (const Error& e) {
    s.log(fmt::format("warning: {} (parties will refuse it)", e.what()));
  }
  // Every party refuses an expired certificate: no federation could ever start, so say so
  // now rather than at the deadline. One not valid yet only warns: a clock off by minutes
  // on this machine (or the parties') may be put right while the coordinator waits.
  if (const ossl::Cert c = ossl::first_certificate(cert)) {
    if (X509_cmp_current_time(X509_get0_notAfter(c.get())) < 0)
      throw Error(fmt::format("the coordinator's certificate ({}) has expired: every party would refuse it; ask the "
                              "federation's CA for a new kit",
                              o.tls.cert));
    if (X509_cmp_current_time(X509_get0_notBefore(c.get())) > 0)
      s.log(fmt::format("warning: the coordinator's certificate ({}) is not valid yet (check this machine's clock): "
                        "parties will refuse it until it is",
                        o.tls.cert));
  }
  GateLimits limits;
  limits.pre_join_bytes = kPreJoinBytes;
  limits.join_timeout_seconds = o.join_timeout_seconds;
  limits.max_waiting = kMaxWaitingConnections;
  s.gate = std::make_unique<ConnectionGate>(o.listen, limits, o.log);
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor;
  s.handshake_refusals = std::make_shared<HandshakeRefusals>(s.options.log);
  s.server = build_server(s, server_credentials(ca, cert, key, s.handshake_refusals), acceptor);
  if (!s.server)
    throw Error(fmt::format("cannot start the coordinator on {} (a key and certificate that do not match?)", o.listen));
  State* raw = &s;
  s.gate->start(std::move(acceptor),
                [raw](const std::string& key, const std::string& why) { raw->on_connection_cut(key, why); });
  s.t_listen = Clock::now();
}

Coordinator::~Coordinator() {
  State& s = *state_;
  if (s.handshake_refusals) s.handshake_refusals->detach();
  if (!s.server) return;
  // End the federation (when run() did not), stop accepting, then let every stream end.
  s.abort("the coordinator is shutting down");
  s.gate->stop();
  s.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  std::unique_lock<std::mutex> lock(s.mutex);
  // Shutdown cancelled every call; their reactions end them at once. Should one not
  // (it never has), the state must outlive it rather than be freed under it.
  if (!s.cv.wait_for(lock, std::chrono::seconds(5), [&] { return s.calls == 0; })) {
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
    const auto give_up = s.t_over + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kFlushSeconds));
    while (s.calls > 0 && Clock::now() < give_up) s.cv.wait_for(lock, std::chrono::milliseconds(50));
    std::vector<std::shared_ptr<Slot>> all = s.roster->joined();
    all.insert(all.end(), s.roster->waiting().begin(), s.roster->waiting().end());
    lock.unlock();
    for (const auto& slot : all) slot->outbox->cancel();
    lock.lock();
    s.cv.wait_for(lock, std::chrono::seconds(1), [&] { return s.calls == 0; });
  }
  const GateCounts gate = s.gate->counts();
  s.gate->stop();
  s.server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  std::lock_guard<std::mutex> lock(s.mutex);
  if (gate.cut_bytes + gate.cut_timeout + gate.refused_full + s.roster->refused_total() > 0)
    s.log(fmt::format("connections: {} accepted, {} closed for sending too much before their Join, {} for not joining "
                      "in time, {} when {} were already waiting; {} streams refused; at most {} connections waited at "
                      "once", gate.accepted, gate.cut_bytes, gate.cut_timeout, gate.refused_full, kMaxWaitingConnections,
                      s.roster->refused_total(), gate.max_waiting_seen));
  if (!s.success) throw FederationError(s.reason);
  return s.outcome();
}

}  // namespace flynn::federated
