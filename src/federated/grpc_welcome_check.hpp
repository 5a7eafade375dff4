#pragma once
// A party's checks of the coordinator's Welcome, before anything that depends on its rows
// leaves it (internal to the gRPC transport; docs/guide/federated.md, "Party policy and the
// signed transcript"): its structure, the party's policy, the party's own entry, and every
// other party's certificate (issued by the CA, not revoked by --crl, CN as named) and key
// binding. The transcript check that follows (collective #1) catches a coordinator that
// told the parties different things; these catch what one Welcome alone can show.
#include <string>

#include "federated/wire_messages.hpp"
#include "flynn/federated/grpc.hpp"
#include "flynn/federated/peer_certificate.hpp"

namespace flynn::federated {

/// What this party sent in its Join: the Welcome must give it back unchanged.
struct OwnEntry {
  std::string name;           ///< its certificate's CN
  std::string public_key;     ///< its X25519 key
  std::string certificate;    ///< its certificate (PEM)
  std::string key_signature;  ///< its key binding
};

/// The policy's own consistency, before connecting: throws flynn::Error naming the flag
/// when no federation could satisfy it.
void check_join_policy(const JoinOptions& options, const std::string& my_name);

/// Throws FederationError naming the first problem of `welcome` for this party: its
/// structure (one name, key, certificate and signature per rank; names non-empty,
/// distinct and sorted; a 16-byte federation id; a positive deadline), the policy of
/// `options` (τ ≥ min_parties, secure aggregation unless allowed off, the names exactly
/// expect_parties when given), this party's own entry, and every other party's
/// certificate against `ca_pem` and `crl` (when given) and its key binding.
void check_welcome(const grpcwire::pb::Welcome& welcome, const JoinOptions& options, const std::string& ca_pem,
                   const OwnEntry& me, const RevocationList* crl);

}  // namespace flynn::federated
