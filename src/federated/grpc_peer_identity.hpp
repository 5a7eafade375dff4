#pragma once
// The party's checks of the coordinator's identity beyond the TLS handshake (internal to
// the gRPC backend; the certificate checks themselves are in peer_certificate.hpp).
#include <grpcpp/grpcpp.h>

#include <string>

namespace flynn::federated {

/// Throws FederationError unless the coordinator's TLS certificate, as the handshake of
/// `context`'s call verified it, carries serverAuth extended key usage and (with a
/// `crl_path`) is not revoked by that CRL of the CA `ca_path`. Call it once the call has a
/// connection (after the first message arrived): before that the call has no peer.
void check_coordinator_identity(const grpc::ClientContext& context, const std::string& ca_path,
                                const std::string& crl_path);

}  // namespace flynn::federated
