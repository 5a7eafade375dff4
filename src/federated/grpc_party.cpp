// The party side of the gRPC backend: one TLS stream to the coordinator, a reader thread
// that queues whatever the coordinator sends (so an Abort is never lost, even while the
// party is busy counting), a watchdog that bounds every write (a coordinator that stops
// reading cannot hold the party), the party's policy checks on the Welcome and the signed
// transcript, and the collectives as Contribution/Result pairs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "flynn/detail/cpu_time.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/key_binding.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/secure_aggregation.hpp"
#include "flynn/io/model_file.hpp"
#include "grpc_peer_identity.hpp"
#include "grpc_transcript.hpp"
#include "grpc_wire.hpp"

namespace flynn::federated {

using namespace grpcwire;
using Clock = std::chrono::steady_clock;

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out.empty() ? "none" : out;
}

std::string comma_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// The policy's own consistency, before connecting: a party that cannot ever be satisfied
// fails at once, naming its flags.
void check_policy(const JoinOptions& o, const std::string& my_cn) {
  if (o.min_parties < 1)
    throw Error(fmt::format("--min-parties {}: must be at least 1", o.min_parties));
  if (o.expect_parties.empty()) return;
  std::vector<std::string> sorted = o.expect_parties;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i].empty()) throw Error("--expect-parties: an empty name");
    if (i > 0 && sorted[i] == sorted[i - 1])
      throw Error(fmt::format("--expect-parties: '{}' is listed twice", sorted[i]));
  }
  if (std::find(sorted.begin(), sorted.end(), my_cn) == sorted.end())
    throw Error(fmt::format("--expect-parties {}: does not list this party's own name '{}' (its "
                            "certificate's CN); the list names every party of the federation",
                            comma_list(o.expect_parties), my_cn));
  if (static_cast<int>(sorted.size()) < o.min_parties)
    throw Error(fmt::format("--expect-parties names {} parties, fewer than --min-parties {}",
                            sorted.size(), o.min_parties));
}

}  // namespace

struct GrpcParty::State {
  JoinOptions options;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::Coordinator::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<pb::PartyMessage, pb::CoordinatorMessage>> stream;
  std::thread reader;

  std::mutex mutex;  // guards everything below
  std::condition_variable cv;
  std::deque<pb::CoordinatorMessage> inbox;
  bool stream_ended = false;  // the reader saw the end of the stream
  std::optional<grpc::Status> status;  // the stream's final status, once fetched
  WireTraffic wire;

  std::mutex write_mutex;  // one Write at a time (the reader thread never writes)
  bool writes_done = false;

  // The write watchdog: while a write is in flight (write_deadline set, guarded by
  // `mutex`), a coordinator that does not take it within the deadline (it stopped reading,
  // so HTTP/2 flow control blocks the Write) has the call cancelled, which ends the Write.
  std::thread watchdog;
  std::optional<Clock::time_point> write_deadline;
  bool write_timed_out = false, stopping = false;

  // From the Welcome.
  int rank = 0, size = 0;
  std::vector<std::string> names;
  SharedSettings settings;
  double deadline = 0;
  bool secure = false, wants_model = false;
  X25519KeyPair keys;
  std::optional<PairwiseMasker> masker;
  std::uint64_t seq = 0;      // collectives made so far
  std::uint64_t reduces = 0;  // all-reduces made so far: the masks' round number
  double masking_seconds = 0;
  // The combined mask of an announced all-reduce (expect_allreduce), computed on a
  // background thread while the party counts its rows.
  struct Premask {
    // Members initialised by the constructor, not in-class: clang cannot default-construct
    // a nested class with member initialisers before the enclosing class is complete.
    Premask() : round(0), values(0), word(0) {}
    std::uint64_t round;
    std::size_t values, word;
    std::future<std::vector<std::uint32_t>> mask32;
    std::future<std::vector<std::uint64_t>> mask64;
  };
  std::optional<Premask> premask;

  void prepare(std::size_t values, std::size_t word) {
    if (!masker || (word != 4 && word != 8)) return;
    premask.emplace();
    premask->round = reduces + 1;
    premask->values = values;
    premask->word = word;
    const PairwiseMasker* m = &*masker;
    const std::uint64_t round = premask->round;
    // The mask of round r is what masking a zero vector adds.
    if (word == 4)
      premask->mask32 = std::async(std::launch::async, [m, values, round] {
        std::vector<std::uint32_t> z(values, 0);
        m->mask(std::span<std::uint32_t>(z), round);
        return z;
      });
    else
      premask->mask64 = std::async(std::launch::async, [m, values, round] {
        std::vector<std::uint64_t> z(values, 0);
        m->mask(std::span<std::uint64_t>(z), round);
        return z;
      });
  }

  std::future<std::vector<std::uint32_t>>& premask_future(std::uint32_t*) { return premask->mask32; }
  std::future<std::vector<std::uint64_t>>& premask_future(std::uint64_t*) { return premask->mask64; }

  void read_loop() {
    pb::CoordinatorMessage m;
    while (stream->Read(&m)) {
      std::lock_guard<std::mutex> lock(mutex);
      wire.bytes_received += m.ByteSizeLong();
      ++wire.messages_received;
      inbox.push_back(std::move(m));
      m = pb::CoordinatorMessage();
      cv.notify_all();
    }
    std::lock_guard<std::mutex> lock(mutex);
    stream_ended = true;
    cv.notify_all();
  }

  void watch() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      if (write_deadline && Clock::now() >= *write_deadline) {
        write_timed_out = true;
        write_deadline.reset();
        context.TryCancel();  // thread-safe; the blocked Write returns false
        continue;
      }
      if (write_deadline) cv.wait_until(lock, *write_deadline);
      else cv.wait(lock);
    }
  }

  // Runs one stream operation (write_mutex held by the caller) under the watchdog.
  template <class Op>
  bool guarded(Op op) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      write_deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(options.deadline_seconds));
      cv.notify_all();
    }
    const bool ok = op();
    std::lock_guard<std::mutex> lock(mutex);
    write_deadline.reset();
    return ok;
  }

  bool timed_out() {
    std::lock_guard<std::mutex> lock(mutex);
    return write_timed_out;
  }

  void write(const pb::PartyMessage& m) {
    {
      std::lock_guard<std::mutex> lock(write_mutex);
      if (!writes_done && guarded([&] { return stream->Write(m); })) {
        std::lock_guard<std::mutex> l(mutex);
        wire.bytes_sent += m.ByteSizeLong();
        ++wire.messages_sent;
        return;
      }
    }
    if (timed_out())
      throw FederationError(fmt::format(
          "the coordinator did not accept this party's message within {} s (--deadline): it "
          "stopped reading; giving up", options.deadline_seconds));
    // The stream is gone: what the coordinator said last (queued Abort, final status) is
    // the reason; next() reports it.
    next("the coordinator to accept a message");
    throw FederationError("the connection to the coordinator is closed");
  }

  // The final status of the stream (only once the reader ended).
  std::string status_text() {
    if (!status) {
      std::lock_guard<std::mutex> lock(write_mutex);
      writes_done = true;
      status = stream->Finish();
    }
    std::string msg = status->error_message();
    if (status->error_code() == grpc::StatusCode::UNAVAILABLE)
      return fmt::format("cannot reach the coordinator at {} over mutual TLS ({}): either no "
                         "coordinator listens there, or the TLS handshake failed (certificates "
                         "not signed by the same CA, no client certificate, or a server name "
                         "that does not match the coordinator's certificate)",
                         options.server, msg.empty() ? "unavailable" : msg);
    if (status->error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
        status->error_code() == grpc::StatusCode::CANCELLED)
      return fmt::format("the connection to the coordinator was cancelled ({})", msg);
    return fmt::format("the coordinator ended the session: {}", msg.empty() ? "no reason given" : msg);
  }

  // The next message, or FederationError with the reason the federation stopped.
  pb::CoordinatorMessage next(const std::string& what) {
    std::unique_lock<std::mutex> lock(mutex);
    const auto limit = std::chrono::steady_clock::now() +
                       std::chrono::duration<double>(options.deadline_seconds);
    cv.wait_until(lock, limit, [&] { return !inbox.empty() || stream_ended; });
    if (!inbox.empty()) {
      pb::CoordinatorMessage m = std::move(inbox.front());
      inbox.pop_front();
      if (m.has_abort())
        throw FederationError(fmt::format("the federation was stopped: {}", m.abort().reason()));
      return m;
    }
    if (stream_ended) {
      lock.unlock();
      throw FederationError(status_text() + fmt::format(" (while waiting for {})", what));
    }
    lock.unlock();
    context.TryCancel();
    throw FederationError(fmt::format(
        "no answer from the coordinator within {} s while waiting for {}",
        options.deadline_seconds, what));
  }

  // One collective: send this party's contribution, return the result's blocks.
  std::vector<std::string> collective(pb::Op op, int root, std::string payload,
                                      std::size_t expected_blocks) {
    pb::PartyMessage m;
    auto* c = m.mutable_contribution();
    c->set_seq(++seq);
    c->set_op(op);
    c->set_root(root);
    c->set_payload(std::move(payload));
    write(m);
    const std::string what = fmt::format("the result of collective #{} ({})", seq, op_name(op));
    pb::CoordinatorMessage reply = next(what);
    if (!reply.has_result() || reply.result().seq() != seq ||
        static_cast<std::size_t>(reply.result().blocks_size()) != expected_blocks)
      throw FederationError(fmt::format("the coordinator sent a malformed answer instead of {}", what));
    return {reply.result().blocks().begin(), reply.result().blocks().end()};
  }

  template <class T>
  void sum(std::span<T> values, pb::Op op) {
    std::vector<T> masked(values.begin(), values.end());
    // The round number counts all-reduces: every party masks the same round alike.
    const std::uint64_t round = ++reduces;
    if (masker) {
      const auto t = std::chrono::steady_clock::now();
      if (premask && premask->round == round && premask->values == values.size() &&
          premask->word == sizeof(T)) {
        const std::vector<T> mask = premask_future(static_cast<T*>(nullptr)).get();
        for (std::size_t i = 0; i < masked.size(); ++i) masked[i] += mask[i];
      } else {
        masker->mask(std::span<T>(masked), round);
      }
      premask.reset();  // waits for an unused precomputation
      masking_seconds += detail::seconds_since(t);
    }
    const auto blocks = collective(op, 0, encode_words<T>(std::span<const T>(masked)), 1);
    try {
      decode_words<T>(blocks[0], values);
    } catch (const Error& e) {
      throw FederationError(fmt::format("the coordinator's sum is malformed: {}", e.what()));
    }
  }
};

namespace {

// The checks of GrpcParty::join on the Welcome, in order: structure, policy, this party's
// own entry, the other parties' certificates and key bindings. Throws FederationError.
void check_welcome(const pb::Welcome& w, const JoinOptions& o, const std::string& ca_pem,
                   const std::string& my_cn, const std::string& my_key, const std::string& my_cert,
                   const std::string& my_key_signature) {
  const int n = w.names_size();
  // τ is the number of names; every per-rank list must have one entry per name.
  if (n < 1 || w.parties() != n || w.public_keys_size() != n || w.certificates_size() != n ||
      w.key_signatures_size() != n || w.rank() < 0 || w.rank() >= n)
    throw FederationError(fmt::format(
        "the coordinator's welcome is malformed ({} parties, {} names, {} keys, {} certificates, "
        "{} key signatures, rank {})", w.parties(), n, w.public_keys_size(), w.certificates_size(),
        w.key_signatures_size(), w.rank()));
  const std::vector<std::string> names(w.names().begin(), w.names().end());
  if (n < o.min_parties)
    throw FederationError(fmt::format(
        "the coordinator's welcome names {} part{} ({}); this party's policy requires at least {} "
        "(with fewer, the sums reveal too much of one party's data): refusing. Lower it "
        "with --min-parties", n, n == 1 ? "y" : "ies", join_names(names), o.min_parties));
  if (o.require_secure_aggregation && !w.secure_aggregation())
    throw FederationError(
        "the coordinator turned secure aggregation off; this party's policy requires it (the "
        "coordinator would see this party's exact counts, row totals and release): refusing. "
        "--allow-no-secure-aggregation accepts a federation without it");
  for (int r = 0; r < n; ++r) {
    if (names[r].empty())
      throw FederationError(fmt::format("the coordinator's welcome gives rank {} no name", r));
    // Strictly increasing: sorted (ranks are the CNs in sorted order) and distinct.
    if (r > 0 && !(names[r - 1] < names[r]))
      throw FederationError(fmt::format(
          "the coordinator's welcome lists the parties out of order or twice ('{}' at rank {} "
          "after '{}'): ranks are the distinct CNs in sorted order", names[r], r, names[r - 1]));
  }
  if (!o.expect_parties.empty()) {
    for (const std::string& name : names)
      if (std::find(o.expect_parties.begin(), o.expect_parties.end(), name) == o.expect_parties.end())
        throw FederationError(fmt::format(
            "the coordinator's welcome names '{}', which is not among the parties this party "
            "agreed to federate with (--expect-parties {}): refusing", name, comma_list(o.expect_parties)));
    for (const std::string& name : o.expect_parties)
      if (std::find(names.begin(), names.end(), name) == names.end())
        throw FederationError(fmt::format(
            "the coordinator's welcome does not name '{}', one of the parties this party agreed to "
            "federate with (--expect-parties {}; all must take part): refusing", name,
            comma_list(o.expect_parties)));
  }
  const int me = w.rank();
  if (w.public_keys(me) != my_key || names[me] != my_cn)
    throw FederationError(fmt::format(
        "the coordinator's welcome gives this party ('{}', rank {}) another key or name than it "
        "sent: refusing to mask (the coordinator may be substituting keys)", my_cn, me));
  if (w.certificates(me) != my_cert || w.key_signatures(me) != my_key_signature)
    throw FederationError(fmt::format(
        "the coordinator's welcome gives this party ('{}', rank {}) another certificate or key "
        "signature than it sent: refusing (the coordinator may be substituting keys)", my_cn, me));
  if (w.session_id().size() != 16)
    throw FederationError(fmt::format("the coordinator's session id has {} bytes, not 16",
                                      w.session_id().size()));
  if (!(std::isfinite(w.deadline_seconds()) && w.deadline_seconds() > 0))
    throw FederationError(fmt::format("the coordinator's deadline {} s is not positive", w.deadline_seconds()));
  // Always, not only with secure aggregation: the transcript check below trusts each
  // party's certificate to speak for the name at its rank.
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    try {
      if (w.public_keys(r).size() != 32) throw Error("its X25519 public key is not 32 bytes");
      verify_exchange_key(ca_pem, w.certificates(r), names[r], w.public_keys(r), w.key_signatures(r));
    } catch (const Error& e) {
      throw FederationError(fmt::format(
          "party '{}' (rank {}): {}; refusing to go on with its key (the coordinator may be "
          "substituting keys)", names[r], r, e.what()));
    }
  }
}

}  // namespace

std::unique_ptr<GrpcParty> GrpcParty::join(const JoinOptions& options) {
  auto s = std::make_unique<State>();
  s->options = options;
  if (!(options.deadline_seconds > 0))
    throw Error(fmt::format("--deadline {}: must be positive", options.deadline_seconds));
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = read_pem(options.tls.ca, "CA certificate (--ca)");
  ssl.pem_cert_chain = read_pem(options.tls.cert, "party certificate (--cert)");
  ssl.pem_private_key = read_pem(options.tls.key, "party private key (--key)");
  // The X25519 key, signed with the TLS key for the certificate's CN (key_binding.hpp).
  const std::string my_cn = certificate_common_name(ssl.pem_cert_chain);
  check_policy(options, my_cn);
  const std::string key_signature = sign_exchange_key(ssl.pem_private_key, my_cn, s->keys.public_key());
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(options.max_message_bytes));
  args.SetMaxSendMessageSize(static_cast<int>(options.max_message_bytes));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  if (!options.server_name.empty()) args.SetSslTargetNameOverride(options.server_name);
  s->channel = grpc::CreateCustomChannel(options.server, grpc::SslCredentials(ssl), args);
  s->stub = pb::Coordinator::NewStub(s->channel);
  s->stream = s->stub->Session(&s->context);
  State* raw = s.get();
  s->reader = std::thread([raw] { raw->read_loop(); });
  s->watchdog = std::thread([raw] { raw->watch(); });

  pb::PartyMessage hello;
  hello.mutable_join()->set_protocol(kGrpcProtocolVersion);
  hello.mutable_join()->set_public_key(s->keys.public_key());
  hello.mutable_join()->set_certificate(ssl.pem_cert_chain);
  hello.mutable_join()->set_key_signature(key_signature);
  std::unique_ptr<GrpcParty> party(new GrpcParty(std::move(s)));
  State& st = *party->state_;
  st.write(hello);
  const pb::CoordinatorMessage m = st.next("the other parties to join");
  // From here on a refusal is also reported to the coordinator (the reason only), which
  // stops every party with it.
  try {
    // The coordinator's certificate: issued for serving (serverAuth), not revoked (--crl).
    check_coordinator_identity(st.context, options.tls.ca, options.crl);
    if (!m.has_welcome())
      throw FederationError("the coordinator answered the join with something else than a welcome");
    const pb::Welcome& w = m.welcome();
    check_welcome(w, options, ssl.pem_root_certs, my_cn, st.keys.public_key(), ssl.pem_cert_chain,
                  key_signature);
    st.rank = w.rank();
    st.size = w.names_size();
    st.names.assign(w.names().begin(), w.names().end());
    st.deadline = w.deadline_seconds();
    st.secure = w.secure_aggregation();
    st.wants_model = w.wants_model();
    try {
      st.settings = from_proto(w.settings());
    } catch (const Error& e) {
      throw FederationError(fmt::format("the coordinator's settings are invalid: {}", e.what()));
    }
    // The transcript: the first collective, before the party protocol's agreement step.
    const std::string digest = transcript_digest(w);
    const std::vector<std::string> signatures = st.collective(
        pb::ALLGATHER, 0, sign_transcript(ssl.pem_private_key, digest), static_cast<std::size_t>(st.size));
    for (int r = 0; r < st.size; ++r) {
      if (r == st.rank) continue;
      if (!transcript_signed_by(w.certificates(r), digest, signatures[r]))
        throw FederationError(fmt::format(
            "party '{}' (rank {}) did not sign what the coordinator told this party (its "
            "transcript signature does not verify): the coordinator told the parties different "
            "things (party list, keys, certificates, session, settings, τ or secure "
            "aggregation), or relayed an old signature: refusing", st.names[r], r));
    }
    if (st.secure) {
      const std::vector<std::string> keys(w.public_keys().begin(), w.public_keys().end());
      st.masker.emplace(st.rank, st.keys, keys, w.session_id());
    }
  } catch (const FederationError& e) {
    party->fail(e.what());
    throw;
  }
  return party;
}

GrpcParty::GrpcParty(std::unique_ptr<State> state) : state_(std::move(state)) {}

GrpcParty::~GrpcParty() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.write_mutex);
    if (!s.writes_done) s.guarded([&] { return s.stream->WritesDone(); });
    s.writes_done = true;
  }
  // Give the coordinator a moment to close the stream itself (after Done/Abort), then cut.
  {
    std::unique_lock<std::mutex> lock(s.mutex);
    s.cv.wait_for(lock, std::chrono::seconds(2), [&] { return s.stream_ended; });
  }
  s.context.TryCancel();
  if (s.reader.joinable()) s.reader.join();
  if (!s.status) s.status = s.stream->Finish();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.stopping = true;
    s.cv.notify_all();
  }
  if (s.watchdog.joinable()) s.watchdog.join();
}

int GrpcParty::rank() const { return state_->rank; }
int GrpcParty::size() const { return state_->size; }
bool GrpcParty::secure_aggregation() const { return state_->secure; }
const SharedSettings& GrpcParty::settings() const { return state_->settings; }
const std::vector<std::string>& GrpcParty::names() const { return state_->names; }
double GrpcParty::deadline_seconds() const { return state_->deadline; }
bool GrpcParty::wants_model() const { return state_->wants_model; }

double GrpcParty::masking_seconds() const { return state_->masking_seconds; }

const WireTraffic& GrpcParty::wire_traffic() const {
  // Only read after the federation (the reader thread no longer counts).
  return state_->wire;
}

void GrpcParty::fail(const std::string& reason) {
  State& s = *state_;
  pb::PartyMessage m;
  m.mutable_failure()->set_reason(reason);
  std::lock_guard<std::mutex> lock(s.write_mutex);
  if (!s.writes_done) s.guarded([&] { return s.stream->Write(m); });
}

void GrpcParty::finish(const std::string& model_file) {
  State& s = *state_;
  pb::PartyMessage m;
  auto* f = m.mutable_finish();
  f->set_model_crc32(io::model_checksum(model_file));
  f->set_model_bytes(model_file.size());
  if (s.rank == 0 && s.wants_model) f->set_model(model_file);
  s.write(m);
  const pb::CoordinatorMessage reply = s.next("the coordinator to confirm that every party finished");
  if (!reply.has_done())
    throw FederationError("the coordinator answered the finish with something else than done");
}

void GrpcParty::do_broadcast(std::string& bytes, int root) {
  auto blocks = state_->collective(pb::BROADCAST, root, rank() == root ? bytes : std::string(), 1);
  bytes = std::move(blocks[0]);
}

void GrpcParty::expect_allreduce(std::size_t values, std::size_t word_bytes) {
  state_->prepare(values, word_bytes);
}

void GrpcParty::do_allreduce(std::span<std::uint32_t> values) { state_->sum(values, pb::SUM32); }
void GrpcParty::do_allreduce(std::span<std::uint64_t> values) { state_->sum(values, pb::SUM64); }

std::vector<std::string> GrpcParty::do_allgather(std::string_view mine) {
  return state_->collective(pb::ALLGATHER, 0, std::string(mine), static_cast<std::size_t>(size()));
}

}  // namespace flynn::federated
