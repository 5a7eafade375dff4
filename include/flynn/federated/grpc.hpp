#pragma once
// The gRPC backend of the federated communicator: separately started processes — one
// coordinator (`flynn federated serve`, not a party) and τ parties (`flynn federated
// join`) — over mutual TLS. Only available when flynn was built with gRPC (FLYNN_HAVE_GRPC
// is 1 in flynn/build_config.hpp; the code lives in src/federated/grpc_*.cpp, the only files that
// include gRPC headers, and is linked as flynn::federated_grpc).
//
// Protocol (proto/federation.proto; sizes and the threat model in docs/guide/federated.md). The
// coordinator is not trusted: everything a party acts on is signed by another party or
// derived from what was signed.
//   * Each party opens ONE bidirectional stream (Federate), authenticated by its client
//     certificate (signed by the federation's CA). Its identity is the certificate's
//     subject CN; the coordinator refuses a stream without a CN, with a CN not on the
//     allow-list, with a CN that already joined, or after the federation is full.
//     Plaintext peers and certificates from another CA fail the TLS handshake.
//   * Join: the party sends its X25519 public key, its certificate and the signature of the
//     key by its certificate's key (key_binding.hpp). When τ parties have joined, each gets
//     a Welcome: its rank (CNs sorted), every party's CN, public key, certificate and
//     signature, a federation id, the deadline, whether secure aggregation is on and the
//     federation's settings. Every party checks the Welcome against its own policy (at
//     least 3 parties, secure aggregation on, optionally the expected CNs; JoinOptions),
//     each other party's certificate (CA, CN, --crl) and key binding, then the parties
//     exchange signatures of their Welcomes (the transcript, collective #1).
//   * Collectives: the party protocol (party.hpp) runs unchanged; each broadcast,
//     all-gather and all-reduce becomes one Contribution per party and one Result to
//     every party. Every block relayed from one party to the others is signed by its
//     sender over the transcript, its rank, the collective's number, operation and purpose
//     (grpc_transcript.hpp), and checked by every receiver before it acts on it: the
//     agreement's fingerprints, the statuses, the reports with the model digest. No sum
//     before every party's fingerprint was checked equal to the party's own; then only
//     the sums the agreed configuration implies, masked with pads bound to that
//     configuration and to the sum (secure_aggregation.hpp). All-reduces are summed by the
//     coordinator modulo 2^32 / 2^64.
//   * Every wait of a party is under its deadline (connecting, the TLS handshake, each
//     message, the shutdown), and every message it accepts is bounded by what the agreed
//     configuration implies; text from other processes is printed escaped and marked.
//   * Limits (the coordinator cannot be held or flooded; docs/guide/federated.md, "Limits"): the
//     coordinator accepts TCP connections itself (grpc_connection_gate.hpp); until its Join
//     is accepted a connection may send at most kPreJoinBytes and live --join-timeout
//     seconds. A stream is refused when it opens (before reading anything) for a missing
//     or unlisted CN, a client certificate without clientAuth usage or revoked by --crl, a
//     full federation or a CN already joined; its Join when the certificate in it exceeds
//     kMaxJoinCertificateBytes, is not PEM X.509, or is not the TLS peer's certificate.
//     Every stream has its own bounded write queue: a party that stops reading stalls
//     only its own stream, which is cancelled when a write to it is older than the
//     deadline, and aborting never waits for one party.
//   * Every phase has a deadline: the coordinator aborts when not every party joined
//     within it, or when a collective is still missing contributions `deadline` seconds
//     after its first one arrived (the abort names the missing parties). A party that
//     disconnects (killed, network lost) or reports a failure stops the federation too.
//     The reason reaches every party, which exits non-zero and writes no model.
//   * The end: every party signed the SHA-256 of the model it would write (its report
//     block); each checks every other's is its own, stages the file, then sends Finish
//     (its CRC-32; rank 0 also the file when the coordinator writes one) and commits the
//     file only on the coordinator's Done.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flynn/build_config.hpp"
#include "flynn/config.hpp"
#include "flynn/dataset.hpp"
#include "flynn/federated/communicator.hpp"
#include "flynn/federated/dp.hpp"
#include "flynn/federated/settings.hpp"  // SharedSettings: what the Welcome carries

namespace flynn::federated {

/// Version of the gRPC federation protocol (Join.protocol); a party of another version is
/// refused with both versions named. 2: Settings carries (name, value) pairs from the
/// settings table (settings.hpp) instead of typed fields, so the variant, the missing-cell
/// policy and every later setting travel. 3: every relayed block signed by its sender
/// (Contribution.purpose, .signature; Result.signatures), masks bound to the sum and the
/// agreed configuration, the model committed after Done; the call is `rpc Federate`, the
/// Welcome's random id `federation_id`.
inline constexpr std::uint32_t kGrpcProtocolVersion = 3;

/// Default cap on one gRPC message, both directions: the transport's own limit, which gRPC
/// receives a whole message up to before flynn's checks (a Result of an all-reduce carries
/// m·L·4 bytes, m·L·8 for a DP release under secure aggregation; an all-gather τ blocks).
/// A party accepts less: what the agreed configuration implies at each step.
inline constexpr std::size_t kDefaultMaxMessageBytes = std::size_t{512} << 20;

/// The largest certificate a Join may carry (PEM). Real ones are 0.6–2 KB; chains of a
/// few intermediates stay far below.
inline constexpr std::size_t kMaxJoinCertificateBytes = std::size_t{16} << 10;
/// The largest key signature a Join may carry (RSA-8192: 1 KiB).
inline constexpr std::size_t kMaxKeySignatureBytes = 2048;
/// What a connection may send before its Join is accepted: the TLS handshake, the HTTP/2
/// preface and the Join itself (≈ 3 KB for an honest party).
inline constexpr std::size_t kPreJoinBytes = std::size_t{64} << 10;
/// Connections that may wait for their Join at once; more are closed when they connect.
inline constexpr std::size_t kMaxWaitingConnections = 2048;
/// Streams of one CN that may wait for their Join at once.
inline constexpr int kMaxWaitingStreamsPerName = 2;
/// Streams that may wait for their Join at once without --allow (with --allow only the
/// listed CNs get this far, so there is no cap that could refuse one of them).
inline constexpr std::size_t kMaxWaitingStreams = 256;
/// Default of `serve --join-timeout`.
inline constexpr double kDefaultJoinTimeoutSeconds = 10;

/// `--max-message-mb`: MiB as bytes; throws flynn::Error unless in [1, 2047].
std::size_t max_message_bytes_from_mib(double mib);

/// `--allow`: a comma-separated list of certificate CNs, spaces around each trimmed;
/// throws flynn::Error on an empty name.
std::vector<std::string> parse_name_list(const std::string& list);

/// PEM files of one endpoint: the federation's CA certificate, this endpoint's
/// certificate and its private key.
struct TlsFiles {
  std::string ca;    ///< CA certificate (PEM): the only issuer trusted for peers
  std::string cert;  ///< this endpoint's certificate chain (PEM)
  std::string key;   ///< this endpoint's private key (PEM, unencrypted)
};

/// Bytes actually serialised onto (and read from) the gRPC stream by one endpoint:
/// protobuf message sizes, without TLS/HTTP2 framing.
struct WireTraffic {
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t messages_sent = 0;
  std::uint64_t messages_received = 0;
};

// ---- coordinator ------------------------------------------------------------------------

/// How `flynn federated serve` runs.
struct CoordinatorOptions {
  std::string listen;           ///< HOST:PORT (port 0: the OS picks one; see port())
  int parties = 0;              ///< τ ≥ 1: the federation starts when τ parties joined
  TlsFiles tls;                 ///< the server's certificate, key, and the CA of the parties
  std::vector<std::string> allow;  ///< allowed CNs (empty: any certificate of the CA)
  double deadline_seconds = 300;   ///< every phase's deadline (see the header comment)
  /// A connection (and its stream) is closed when no Join was accepted on it this many
  /// seconds after it connected.
  double join_timeout_seconds = kDefaultJoinTimeoutSeconds;
  /// PEM certificate revocation list of the CA (empty: none): revoked parties are refused.
  std::string crl;
  bool secure_aggregation = true;  ///< parties mask their all-reduce contributions
  bool wants_model = false;        ///< rank 0 sends the final model file at Finish
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;
  SharedSettings settings;         ///< handed to every party in the Welcome
  /// Progress lines ("party 'alice' joined", "refused …"); may be empty.
  std::function<void(const std::string&)> log;
  /// Called with every Contribution payload the coordinator receives (rank, collective
  /// number, operation name, bytes): tests check what the coordinator can see.
  std::function<void(int, std::uint64_t, const std::string&, std::string_view)> observe;
  /// Tests only: plays a malicious coordinator by editing the parties' X25519 public keys
  /// (by rank) just before the Welcome is sent. The parties must detect it (their keys are
  /// signed with their certificates' keys) and abort.
  std::function<void(std::vector<std::string>&)> tamper_public_keys;
};

/// One party as the coordinator saw it.
struct CoordinatorParty {
  std::string name;   ///< certificate CN
  int rank = 0;
  WireTraffic wire;   ///< from the coordinator's side: received = what the party sent
};

/// What a successful federation leaves at the coordinator.
struct CoordinatorOutcome {
  std::vector<CoordinatorParty> parties;  ///< by rank
  std::vector<std::string> refused;       ///< "name: reason" of the first refused streams
  std::uint64_t refused_total = 0;        ///< refused streams, all of them
  std::uint64_t collectives = 0;          ///< collectives relayed
  std::string model_file;                 ///< rank 0's model file (when wants_model)
  std::uint32_t model_crc32 = 0;          ///< the CRC-32 every party reported
  std::uint64_t model_bytes = 0;
  double seconds = 0;                     ///< from the first join to the last Finish
};

/// The coordinator: a gRPC server relaying one federation, then stopping.
class Coordinator {
 public:
  /// Validates the options, reads the PEM files and starts listening (throws
  /// flynn::Error naming the problem: unreadable file, bad address, port in use).
  explicit Coordinator(CoordinatorOptions options);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  /// The port actually bound (useful with port 0).
  int port() const;

  /// Runs the federation to its end. Throws FederationError with the reason every party
  /// was told when it fails (a party refused to start, disconnected, missed a deadline,
  /// reported an error, or the parties' models differ), or, before the start, as soon as
  /// it can no longer begin: every party that joined left and none is connected, or a
  /// party of `allow` is revoked by `crl` and fewer than τ allowed names remain.
  CoordinatorOutcome run();

  struct State;  ///< implementation detail

 private:
  std::unique_ptr<State> state_;
};

// ---- party -------------------------------------------------------------------------------

/// Default of JoinOptions::min_parties (`--min-parties`): with τ = 2 each party can
/// subtract its own counts from the sum and so learns the other's exactly; with 3 or more
/// a party's contribution is hidden among at least two others'.
inline constexpr int kDefaultMinParties = 3;

/// How `flynn federated join` connects, and the policy this party enforces on what the
/// coordinator tells it (see GrpcParty::join). The defaults are the strict policy; each
/// weakening is a field a party sets deliberately.
struct JoinOptions {
  std::string server;          ///< HOST:PORT of the coordinator
  TlsFiles tls;                ///< the party's certificate and key, and the CA of the server
  /// The longest this party waits for anything of the coordinator: connecting (TCP and
  /// the TLS handshake), any answer (joining included), the coordinator accepting any one
  /// message (a coordinator that stops reading cannot hold a write). Giving up then takes
  /// at most 2 s more (telling the coordinator why, closing the stream). The coordinator's
  /// own deadline normally fires first.
  double deadline_seconds = 600;
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;
  /// Overrides the host name checked against the server certificate (default: the host
  /// part of `server`): the coordinator's identity, checked by TLS.
  std::string server_name;

  // ---- policy (`--min-parties`, `--expect-parties`, `--allow-no-secure-aggregation`)
  /// The fewest parties (τ, this one included) this party federates with.
  int min_parties = kDefaultMinParties;
  /// The CNs of the parties this party agrees to federate with, itself included (empty:
  /// any certificate of the CA). The Welcome must name exactly these: no other name, and
  /// none missing (a subset is another federation: other τ, so another ε/τ under
  /// `--dp-unit paper`, and other parties' data in the model).
  std::vector<std::string> expect_parties;
  /// Refuse a federation without secure aggregation (the coordinator would see this
  /// party's exact counts, row totals and DP release).
  bool require_secure_aggregation = true;
  /// PEM certificate revocation list of the CA (empty: none): a revoked coordinator
  /// certificate, or another party's in the Welcome, is refused.
  std::string crl;
};

/// One party's endpoint: a Communicator whose collectives go through the coordinator.
class GrpcParty final : public Communicator {
 public:
  /// Connects over mutual TLS, joins, waits for the Welcome and checks it before anything
  /// that depends on this party's data is sent (grpc_welcome_check.hpp):
  ///   * the message itself: at most kMaxWelcomeBytes, no field this build does not know;
  ///   * the policy: τ ≥ min_parties, secure aggregation on unless allowed off, the names
  ///     exactly `expect_parties` when given;
  ///   * its structure: τ names, keys, certificates and signatures; names distinct and
  ///     sorted (ranks are the sorted CNs); this party's own entry (CN, X25519 key,
  ///     certificate, key signature) exactly what it sent; a 16-byte federation id;
  ///   * every other party's certificate (issued by the CA, CN = its name, not revoked by
  ///     `crl`) and key binding;
  ///   * the transcript (grpc_transcript.hpp): collective #1, every party's signature of
  ///     its Welcome (rank cleared); each must verify against this party's own Welcome, so
  ///     a coordinator that told the parties different things (lists, keys, settings, τ,
  ///     secure aggregation) is caught.
  /// A refusal is reported to the coordinator (Failure, the reason only) and thrown as a
  /// FederationError naming the policy and the flag that would weaken it. Also throws
  /// flynn::Error for a bad policy (expect_parties without this party, fewer names than
  /// min_parties) or an unreadable CRL, and FederationError when the coordinator cannot be
  /// reached within the deadline, the TLS handshake fails, or the coordinator refuses
  /// (its reason), aborts, or sends what this party cannot accept.
  static std::unique_ptr<GrpcParty> join(const JoinOptions& options);
  ~GrpcParty() override;

  int rank() const override;
  int size() const override;
  std::string backend() const override { return "grpc"; }
  bool secure_aggregation() const override;
  /// Starts computing the masks of the announced all-reduce on a background thread (with
  /// secure aggregation), so that masking costs the aggregation step only an addition.
  void expect_allreduce(std::size_t values, std::size_t word_bytes, std::string_view purpose,
                        int collectives_before) override;
  /// Binds the masks to the agreed configuration and allows exactly its sums from now on.
  void on_agreement(std::string_view configuration_digest, const std::vector<SumShape>& sums) override;

  /// The settings the coordinator announced.
  const SharedSettings& settings() const;
  /// CN of every party, by rank.
  const std::vector<std::string>& names() const;
  /// The coordinator's deadline for every phase, seconds.
  double deadline_seconds() const;
  /// Whether the coordinator asked rank 0 for the model file at finish().
  bool wants_model() const;

  /// Tells the coordinator this party stops, with `reason` (best effort: the stream may
  /// already be gone). The coordinator aborts the federation for everyone.
  void fail(const std::string& reason);
  /// Final message: this party's model file (sent in full by rank 0 when asked, else its
  /// CRC-32 and size); waits until the coordinator confirms every party finished (Done).
  /// Throws FederationError on anything else (an Abort, another message, the deadline).
  void finish(const std::string& model_file);

  /// Bytes of gRPC messages this party sent and received.
  const WireTraffic& wire_traffic() const;
  /// Seconds the all-reduces spent on secure-aggregation masks: computing them, or
  /// waiting for the precomputed ones and adding them.
  double masking_seconds() const;

  struct State;  ///< implementation detail

 protected:
  void do_broadcast(std::string& bytes, int root) override;
  void do_allreduce(std::span<std::uint32_t> values) override;
  void do_allreduce(std::span<std::uint64_t> values) override;
  std::vector<std::string> do_allgather(std::string_view mine) override;

 private:
  explicit GrpcParty(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace flynn::federated
