#pragma once
// The coordinator's checks of a party's first message (internal to the gRPC transport;
// protobuf only, so a fuzz target drives it): a Join of this protocol version, a 32-byte
// X25519 key, a certificate of at most kMaxJoinCertificateBytes that is a PEM X.509
// certificate and the very one the party presented in the TLS handshake, and a key
// signature of at most kMaxKeySignatureBytes.
#include <optional>
#include <string>

#include "federated/wire_messages.hpp"

namespace flynn::federated {

/// Why a Join is refused, and the kind of refusal (the gRPC status the stream ends with).
struct JoinRefusal {
  enum class Kind { InvalidArgument, FailedPrecondition, PermissionDenied } kind;
  std::string why;
};

/// The refusal of `first`, the first message of a party that presented `tls_certificate`
/// (PEM) in its handshake; nullopt when it is an acceptable Join.
std::optional<JoinRefusal> check_join(const grpcwire::pb::PartyMessage& first, const std::string& tls_certificate);

}  // namespace flynn::federated
