#pragma once
// The transcript of a gRPC federation and the signed blocks bound to it (internal to the
// gRPC transport; docs/guide/federated.md, "Party policy and the signed transcript").
//
// Why: the coordinator writes each party its own Welcome and relays every block the
// parties exchange. A lying coordinator could tell party A one party list, key set, τ,
// secure-aggregation flag or DP setting and party B another, or show a party blocks that
// another party never sent (a hello whose fingerprint equals the victim's own, a report
// naming the victim's model digest), so that each party's own checks pass while the
// federation as a whole is not the one any party agreed to.
//
// The transcript digest: SHA-256 of kTranscriptTag, a NUL and protobuf's deterministic
// serialisation of the Welcome with its `rank` field cleared (the only field that differs
// between honest Welcomes): federation id, τ, names, X25519 keys, certificates, key
// signatures, secure aggregation, deadline, wants_model and the whole Settings message.
// A field added to Settings (or Welcome) later is covered without touching this file.
//
// Signed blocks: every block a party contributes to an all-gather (or broadcasts as the
// root) carries its signature, with its TLS certificate's key, of
//     kBlockTag ‖ NUL ‖ transcript digest ‖ federation id ‖ sender rank ‖ seq ‖ op ‖
//     purpose ‖ SHA-256(block)
// (fields length-prefixed or fixed-width, block_message). Every receiver checks every
// other party's signature with the certificate its Welcome gives that rank, against its
// OWN transcript digest, before it acts on any block. So:
//   * collective #1 (purpose "transcript", an empty block) is the transcript check: a
//     signature verifies only when the signer was told the same Welcome;
//   * a block cannot be forged, moved to another rank, replayed into another collective,
//     purpose or federation, or altered: it verifies only where its sender put it.
// Federation binding of the keys: the Join-time key binding (key_binding.hpp) names no
// federation (it is signed before the coordinator picks the id); the transcript signature
// covers the federation id and every party's fresh X25519 key, the signer's own included,
// so a binding or signature replayed from an earlier federation does not verify against
// this one's digest — each party's freshly drawn key serves as its nonce.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "federated/certificate_keys.hpp"
#include "federated/wire_messages.hpp"

namespace flynn::federated::grpcwire {

/// Domain tag of the transcript digest: never the hash of anything else.
inline constexpr std::string_view kTranscriptTag = "flynn federated transcript v2";
/// Domain tag of a signed block: a block signature is never a key binding or anything else.
inline constexpr std::string_view kBlockTag = "flynn federated block v1";
/// Purpose of collective #1, the transcript check.
inline constexpr std::string_view kTranscriptPurpose = "transcript";

/// SHA-256 of kTranscriptTag, a NUL, and the deterministic serialisation of `welcome`
/// with its rank cleared (32 bytes).
std::string transcript_digest(const pb::Welcome& welcome);

/// What every block of one federation is bound to, as one party was told it.
struct BlockScope {
  std::string transcript;     ///< transcript_digest of the party's Welcome
  std::string federation_id;  ///< the Welcome's federation id
};

/// The scope of `welcome`.
BlockScope scope_of(const pb::Welcome& welcome);

/// Where one block sits: its sender's rank, the collective and what it carries.
struct BlockPlace {
  int sender = 0;
  std::uint64_t seq = 0;
  pb::Op op = pb::OP_UNSPECIFIED;
  std::string_view purpose;
};

/// The bytes a block's signature signs (see the header comment).
std::string block_message(const BlockScope& scope, const BlockPlace& place, std::string_view block);

/// Signs the blocks this party sends.
class BlockSigner {
 public:
  /// Throws flynn::Error when `private_key_pem` cannot be read.
  explicit BlockSigner(const std::string& private_key_pem);
  std::string sign(const BlockScope& scope, const BlockPlace& place, std::string_view block) const;

 private:
  SigningKey key_;
};

/// Checks the blocks of every party, with the certificates of the Welcome (by rank; their
/// chains and names checked already).
class BlockVerifier {
 public:
  /// Throws flynn::Error naming the rank of a certificate that cannot be read.
  explicit BlockVerifier(const std::vector<std::string>& certificates_by_rank);
  /// Whether `signature` is place.sender's signature of `block` at `place` in `scope`.
  bool verifies(const BlockScope& scope, const BlockPlace& place, std::string_view block,
                std::string_view signature) const;

 private:
  std::vector<VerifyingKey> keys_;
};

/// The transcript signature of the party at rank `view.rank()` of `view`: its signature
/// of the empty block of collective #1 in the scope of `view`.
std::string sign_transcript(const std::string& private_key_pem, const pb::Welcome& view);

/// Whether `signature` is the transcript signature, by the key of `certificate_pem`, of
/// the party at rank `signer` in the federation as `view` describes it. Throws
/// flynn::Error when the certificate is unreadable.
bool transcript_signed_by(const std::string& certificate_pem, const pb::Welcome& view, int signer,
                          std::string_view signature);

}  // namespace flynn::federated::grpcwire
