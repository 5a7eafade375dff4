// The party side of the gRPC backend: the Join, the party's checks of the Welcome
// (grpc_welcome_check.hpp), the transcript, and the collectives as Contribution/Result
// pairs — every relayed block signed by its sender and checked by every receiver
// (grpc_transcript.hpp), every sum one the agreed configuration implies and masked with
// pads bound to it (grpc_party_sums.hpp). The stream itself, with every wait under the
// deadline, is grpc_party_stream.hpp.
#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "federated/grpc_party_stream.hpp"
#include "federated/grpc_party_sums.hpp"
#include "federated/grpc_welcome_check.hpp"
#include "federated/party_messages.hpp"
#include "federated/relayed_text.hpp"
#include "federated/safety_switches.hpp"
#include "flynn/error.hpp"
#include "flynn/federated/key_binding.hpp"
#include "flynn/federated/party.hpp"
#include "flynn/io/model_file.hpp"
#include "grpc_peer_identity.hpp"
#include "grpc_transcript.hpp"
#include "grpc_wire.hpp"

namespace flynn::federated {

using namespace grpcwire;

struct GrpcParty::State {
  JoinOptions options;
  std::unique_ptr<PartyStream> stream;
  X25519KeyPair keys;
  bool done = false;  // the coordinator confirmed the end

  // From the Welcome.
  int rank = 0, size = 0;
  std::vector<std::string> names;
  SharedSettings settings;
  double deadline = 0;
  bool secure = false, wants_model = false;
  BlockScope scope;
  std::optional<BlockSigner> signer;
  std::optional<BlockVerifier> verifier;

  AgreedSums agreed;
  std::optional<SumMasks> masks;
  std::uint64_t seq = 0;  // collectives made so far
  double masking_seconds = 0;
  WireTraffic wire;  // a snapshot for wire_traffic()

  void adopt(const pb::Welcome& w, const std::string& private_key_pem);
  std::vector<std::string> signed_collective(pb::Op op, int root, std::string block, std::string_view purpose);
  pb::Result exchange(pb::PartyMessage& m, std::size_t blocks, std::size_t bound);
  void verify(const pb::Result& r, pb::Op op, int root, std::string_view purpose) const;
  template <class T>
  void sum(std::span<T> values, pb::Op op, std::string_view purpose);
};

// What the Welcome fixes for the whole federation (checked by check_welcome already).
void GrpcParty::State::adopt(const pb::Welcome& w, const std::string& private_key_pem) {
  rank = w.rank();
  size = w.names_size();
  names.assign(w.names().begin(), w.names().end());
  deadline = w.deadline_seconds();
  secure = w.secure_aggregation();
  wants_model = w.wants_model();
  try {
    settings = from_proto(w.settings());
  } catch (const Error& e) {
    throw FederationError(fmt::format("the coordinator's settings are invalid: {}", inert_text(e.what())));
  }
  scope = scope_of(w);
  signer.emplace(private_key_pem);
  verifier.emplace(std::vector<std::string>(w.certificates().begin(), w.certificates().end()));
}

// Sends this party's part of collective `seq` and returns the coordinator's Result,
// checked for its shape (the blocks it must hold) and bounded in size.
pb::Result GrpcParty::State::exchange(pb::PartyMessage& m, std::size_t blocks, std::size_t bound) {
  const pb::Contribution& c = m.contribution();
  const std::string what = fmt::format("the result of collective #{} ({}, {})", c.seq(), op_name(c.op()), c.purpose());
  stream->expect_at_most(bound);
  stream->write(m);
  pb::CoordinatorMessage reply = stream->next(what);
  const bool signed_op = c.op() == pb::ALLGATHER || c.op() == pb::BROADCAST;
  if (!reply.has_result() || reply.result().seq() != c.seq() ||
      static_cast<std::size_t>(reply.result().blocks_size()) != blocks ||
      static_cast<std::size_t>(reply.result().signatures_size()) != (signed_op ? blocks : 0))
    throw FederationError(fmt::format("the coordinator sent a malformed answer ({}) instead of {}",
                                      kind_name(reply), what));
  return std::move(*reply.mutable_result());
}

// Every block must carry its sender's signature over exactly this place in this
// federation (grpc_transcript.hpp): a forged, altered, moved or replayed block stops the
// party before it acts on it.
void GrpcParty::State::verify(const pb::Result& r, pb::Op op, int root, std::string_view purpose) const {
  if (!safety_check_on(SafetyCheck::BlockSignatures)) return;
  for (int i = 0; i < r.blocks_size(); ++i) {
    const int sender = op == pb::ALLGATHER ? i : root;
    if (verifier->verifies(scope, {sender, r.seq(), op, purpose}, r.blocks(i), r.signatures(i))) continue;
    const std::string who = fmt::format("party '{}' (rank {})", inert_text(names[sender], 100), sender);
    if (purpose == kTranscriptPurpose)
      throw FederationError(fmt::format(
          "{} did not sign what the coordinator told this party (its transcript signature does not verify): the "
          "coordinator told the parties different things (party list, keys, certificates, federation, settings, "
          "τ or secure aggregation), or relayed an old signature: refusing", who));
    throw FederationError(fmt::format(
        "the coordinator relayed a '{}' block of collective #{} as {}'s, but {} did not sign it (its signature "
        "does not verify): a forged, altered or replayed block: refusing", purpose, r.seq(), who, who));
  }
}

std::vector<std::string> GrpcParty::State::signed_collective(pb::Op op, int root, std::string block,
                                                             std::string_view purpose) {
  pb::PartyMessage m;
  auto* c = m.mutable_contribution();
  c->set_seq(++seq);
  c->set_op(op);
  c->set_root(root);
  c->set_purpose(std::string(purpose));
  const bool sends = op == pb::ALLGATHER || rank == root;
  if (sends) c->set_signature(signer->sign(scope, {rank, seq, op, purpose}, block));
  const std::size_t own = block.size();
  c->set_payload(sends ? std::move(block) : std::string());
  // After the agreement, blocks of one collective share their layout: another party's may
  // exceed this party's own by a failure's text at most. A broadcast's receivers know
  // nothing of its size.
  const std::size_t blocks = op == pb::ALLGATHER ? static_cast<std::size_t>(size) : 1;
  const std::size_t each =
      agreed.agreed() ? own + kBlockSlackBytes : std::max(own + kBlockSlackBytes, kMaxAgreementBlockBytes);
  const std::size_t bound = op == pb::ALLGATHER ? blocks * (each + kMaxKeySignatureBytes + 16) + kFramingBytes
                                                : options.max_message_bytes;
  pb::Result r = exchange(m, blocks, bound);
  verify(r, op, root, purpose);
  return {std::make_move_iterator(r.mutable_blocks()->begin()), std::make_move_iterator(r.mutable_blocks()->end())};
}

template <class T>
void GrpcParty::State::sum(std::span<T> values, pb::Op op, std::string_view purpose) {
  agreed.check(purpose, sizeof(T), values.size());
  std::vector<T> masked(values.begin(), values.end());
  pb::PartyMessage m;
  auto* c = m.mutable_contribution();
  c->set_seq(++seq);
  c->set_op(op);
  c->set_purpose(std::string(purpose));
  if (masks) masking_seconds += masks->mask(std::span<T>(masked), agreed.digest(), seq, purpose);
  c->set_payload(encode_words<T>(std::span<const T>(masked)));
  const pb::Result r = exchange(m, 1, values.size() * sizeof(T) + kFramingBytes);
  try {
    decode_words<T>(r.blocks(0), values);
  } catch (const Error& e) {
    throw FederationError(fmt::format("the coordinator's sum is malformed: {}", e.what()));
  }
}

std::unique_ptr<GrpcParty> GrpcParty::join(const JoinOptions& options) {
  if (!(options.deadline_seconds > 0))
    throw Error(fmt::format("--deadline {}: must be positive", options.deadline_seconds));
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = read_pem(options.tls.ca, "CA certificate (--ca)");
  ssl.pem_cert_chain = read_pem(options.tls.cert, "party certificate (--cert)");
  ssl.pem_private_key = read_pem(options.tls.key, "party private key (--key)");
  OwnEntry me;
  me.name = certificate_common_name(ssl.pem_cert_chain);
  check_join_policy(options, me.name);
  std::optional<RevocationList> crl;
  if (!options.crl.empty()) crl = RevocationList::load(options.crl, options.tls.ca);
  auto s = std::make_unique<State>();
  s->options = options;
  // The X25519 key, signed with the TLS key for the certificate's CN (key_binding.hpp).
  me.public_key = s->keys.public_key();
  me.certificate = ssl.pem_cert_chain;
  me.key_signature = sign_exchange_key(ssl.pem_private_key, me.name, me.public_key);
  s->stream = std::make_unique<PartyStream>(options, grpc::SslCredentials(ssl));
  std::unique_ptr<GrpcParty> party(new GrpcParty(std::move(s)));
  State& st = *party->state_;
  pb::PartyMessage hello;
  hello.mutable_join()->set_protocol(kGrpcProtocolVersion);
  hello.mutable_join()->set_public_key(me.public_key);
  hello.mutable_join()->set_certificate(me.certificate);
  hello.mutable_join()->set_key_signature(me.key_signature);
  // From here on a refusal is also reported to the coordinator (the reason only), which
  // stops every party with it.
  try {
    st.stream->expect_at_most(kMaxWelcomeBytes);
    st.stream->write(hello);
    const pb::CoordinatorMessage m = st.stream->next("the other parties to join");
    // The coordinator's certificate: issued for serving (serverAuth), not revoked (--crl).
    check_coordinator_identity(st.stream->context(), crl ? &*crl : nullptr);
    if (!m.has_welcome())
      throw FederationError(fmt::format("the coordinator answered the join with a {}, not a welcome", kind_name(m)));
    check_welcome(m.welcome(), options, ssl.pem_root_certs, me, crl ? &*crl : nullptr);
    st.adopt(m.welcome(), ssl.pem_private_key);
    // The transcript: collective #1, an empty block signed in the scope of this party's
    // Welcome; each signature verifies only if its signer was told the same.
    st.signed_collective(pb::ALLGATHER, 0, "", kTranscriptPurpose);
    if (st.secure) {
      const std::vector<std::string> keys(m.welcome().public_keys().begin(), m.welcome().public_keys().end());
      st.masks.emplace(st.rank, st.keys, keys, m.welcome().federation_id());
    }
  } catch (const FederationError& e) {
    party->fail(e.what());
    throw;
  }
  return party;
}

GrpcParty::GrpcParty(std::unique_ptr<State> state) : state_(std::move(state)) {}

GrpcParty::~GrpcParty() { state_->stream->close(!state_->done); }

int GrpcParty::rank() const { return state_->rank; }
int GrpcParty::size() const { return state_->size; }
bool GrpcParty::secure_aggregation() const { return state_->secure; }
const SharedSettings& GrpcParty::settings() const { return state_->settings; }
const std::vector<std::string>& GrpcParty::names() const { return state_->names; }
double GrpcParty::deadline_seconds() const { return state_->deadline; }
bool GrpcParty::wants_model() const { return state_->wants_model; }
double GrpcParty::masking_seconds() const { return state_->masking_seconds; }

const WireTraffic& GrpcParty::wire_traffic() const {
  state_->wire = state_->stream->traffic();
  return state_->wire;
}

void GrpcParty::fail(const std::string& reason) {
  pb::PartyMessage m;
  m.mutable_failure()->set_reason(detail::bounded_reason(reason));
  state_->stream->write_last(m);
}

void GrpcParty::finish(const std::string& model_file) {
  State& s = *state_;
  pb::PartyMessage m;
  auto* f = m.mutable_finish();
  f->set_model_crc32(io::model_checksum(model_file));
  f->set_model_bytes(model_file.size());
  if (s.rank == 0 && s.wants_model) f->set_model(model_file);
  s.stream->expect_at_most(kMaxAbortBytes);
  s.stream->write(m);
  const pb::CoordinatorMessage reply = s.stream->next("the coordinator to confirm that every party finished");
  if (!reply.has_done())
    throw FederationError(fmt::format("the coordinator answered the finish with a {}, not done", kind_name(reply)));
  s.done = true;
}

void GrpcParty::do_broadcast(std::string& bytes, int root) {
  auto blocks = state_->signed_collective(pb::BROADCAST, root, rank() == root ? bytes : std::string(), purpose());
  bytes = std::move(blocks[0]);
}

void GrpcParty::expect_allreduce(std::size_t values, std::size_t word_bytes, std::string_view purpose,
                                 int collectives_before) {
  State& s = *state_;
  if (s.masks && s.agreed.agreed())
    s.masks->prepare(s.agreed.digest(), s.seq + static_cast<std::uint64_t>(collectives_before) + 1, values,
                     word_bytes, purpose);
}

void GrpcParty::on_agreement(std::string_view configuration_digest, const std::vector<SumShape>& sums) {
  state_->agreed.agree(std::string(configuration_digest), sums);
}

void GrpcParty::do_allreduce(std::span<std::uint32_t> values) { state_->sum(values, pb::SUM32, purpose()); }
void GrpcParty::do_allreduce(std::span<std::uint64_t> values) { state_->sum(values, pb::SUM64, purpose()); }

std::vector<std::string> GrpcParty::do_allgather(std::string_view mine) {
  return state_->signed_collective(pb::ALLGATHER, 0, std::string(mine), purpose());
}

}  // namespace flynn::federated
