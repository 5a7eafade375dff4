#pragma once
// The party's checks of the coordinator's identity beyond the TLS handshake (internal to
// the gRPC backend; the certificate checks themselves are in peer_certificate.hpp).
#include <grpcpp/grpcpp.h>

#include <string>

#include "flynn/federated/peer_certificate.hpp"

namespace flynn::federated {

/// Throws FederationError unless the coordinator's TLS certificate, as the handshake of
/// `context`'s call verified it, carries serverAuth extended key usage and (with a `crl`)
/// is not revoked by it. Call it once the call has a connection (after the first message
/// arrived): before that the call has no peer.
void check_coordinator_identity(const grpc::ClientContext& context, const RevocationList* crl);

}  // namespace flynn::federated
