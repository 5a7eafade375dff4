// The party side of the gRPC backend: one TLS stream to the coordinator, a reader thread
// that queues whatever the coordinator sends (so an Abort is never lost, even while the
// party is busy counting), and the collectives as Contribution/Result pairs.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/federated/key_binding.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/federated/secure_aggregation.hpp"
#include "flynn/io/model_file.hpp"
#include "grpc_peer_identity.hpp"
#include "grpc_wire.hpp"

namespace flynn::federated {

using namespace grpcwire;

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

  void write(const pb::PartyMessage& m) {
    {
      std::lock_guard<std::mutex> lock(write_mutex);
      if (!writes_done && stream->Write(m)) {
        std::lock_guard<std::mutex> l(mutex);
        wire.bytes_sent += m.ByteSizeLong();
        ++wire.messages_sent;
        return;
      }
    }
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
      masking_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    }
    const auto blocks = collective(op, 0, encode_words<T>(std::span<const T>(masked)), 1);
    try {
      decode_words<T>(blocks[0], values);
    } catch (const Error& e) {
      throw FederationError(fmt::format("the coordinator's sum is malformed: {}", e.what()));
    }
  }
};

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

  pb::PartyMessage hello;
  hello.mutable_join()->set_protocol(kGrpcProtocolVersion);
  hello.mutable_join()->set_public_key(s->keys.public_key());
  hello.mutable_join()->set_certificate(ssl.pem_cert_chain);
  hello.mutable_join()->set_key_signature(key_signature);
  std::unique_ptr<GrpcParty> party(new GrpcParty(std::move(s)));
  State& st = *party->state_;
  st.write(hello);
  const pb::CoordinatorMessage m = st.next("the other parties to join");
  // The coordinator's certificate: issued for serving (serverAuth), not revoked (--crl).
  // The reason also goes to the coordinator, which stops every party with it.
  try {
    check_coordinator_identity(st.context, options.tls.ca, options.crl);
  } catch (const FederationError& e) {
    party->fail(e.what());
    throw;
  }
  if (!m.has_welcome()) throw FederationError("the coordinator answered the join with something else than a welcome");
  const pb::Welcome& w = m.welcome();
  st.rank = w.rank();
  st.size = w.parties();
  if (st.size < 1 || st.rank < 0 || st.rank >= st.size || w.names_size() != st.size ||
      w.public_keys_size() != st.size)
    throw FederationError("the coordinator's welcome is malformed");
  st.names.assign(w.names().begin(), w.names().end());
  st.deadline = w.deadline_seconds();
  st.secure = w.secure_aggregation();
  st.wants_model = w.wants_model();
  try {
    st.settings = from_proto(w.settings());
  } catch (const Error& e) {
    throw FederationError(fmt::format("the coordinator's settings are invalid: {}", e.what()));
  }
  if (st.secure) {
    const std::vector<std::string> keys(w.public_keys().begin(), w.public_keys().end());
    // Before any mask is derived: every key is the one its party signed (a coordinator
    // that swapped keys could otherwise derive masks and unmask counts). A failure is also
    // reported to the coordinator, which stops every party with this reason.
    try {
      if (w.certificates_size() != st.size || w.key_signatures_size() != st.size)
        throw FederationError("the coordinator's welcome carries no certificates and key signatures: "
                              "secure aggregation cannot check the parties' keys");
      if (keys[st.rank] != st.keys.public_key() || st.names[st.rank] != my_cn)
        throw FederationError(fmt::format(
            "the coordinator's welcome gives this party ('{}', rank {}) another key or name than "
            "it sent: refusing to mask (the coordinator may be substituting keys)", my_cn, st.rank));
      for (int r = 0; r < st.size; ++r) {
        if (r == st.rank) continue;
        try {
          verify_exchange_key(ssl.pem_root_certs, w.certificates(r), st.names[r], keys[r], w.key_signatures(r));
        } catch (const Error& e) {
          throw FederationError(fmt::format(
              "party '{}' (rank {}): {}; refusing to mask with its key (the coordinator may be "
              "substituting keys)", st.names[r], r, e.what()));
        }
      }
    } catch (const FederationError& e) {
      party->fail(e.what());
      throw;
    }
    st.masker.emplace(st.rank, st.keys, keys, w.session_id());
  }
  return party;
}

GrpcParty::GrpcParty(std::unique_ptr<State> state) : state_(std::move(state)) {}

GrpcParty::~GrpcParty() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.write_mutex);
    if (!s.writes_done) s.stream->WritesDone();
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
  if (!s.writes_done) s.stream->Write(m);
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
