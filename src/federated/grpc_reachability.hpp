#pragma once
// Before a party opens its gRPC stream (internal; join_federation in grpc_commands.cpp): waiting for the
// coordinator to listen, and one TLS handshake of its own, made with OpenSSL exactly as the
// channel will make it, so that a failure is named by its cause (gRPC reports them all as
// "failed to connect").
#include <functional>
#include <string>

#include "flynn/federated/grpc.hpp"

namespace flynn::federated {

/// The PEM texts a party connects with.
struct PartyPems {
  std::string ca, cert, key;
};

/// Retries a TCP connection to options.server with backoff (0.1 s doubling to 2 s) while it
/// is refused or unreachable, until options.deadline_seconds; `log` (may be empty) hears once
/// that the party waits. Then makes one TLS handshake as the party (its certificate, the CA,
/// the server name, ALPN h2) and exchanges HTTP/2 settings, and throws FederationError naming
/// the cause of a failure: the coordinator's certificate not signed by --ca (unknown CA),
/// issued for another name, expired or not yet valid; or the coordinator refusing this
/// party's certificate (its alert: unknown CA, expired, bad certificate). Also throws when
/// this party's own certificate is expired or not yet valid.
void wait_for_coordinator(const JoinOptions& options, const PartyPems& pems,
                          const std::function<void(const std::string&)>& log);

/// Throws FederationError when this party's certificate (PEM) has expired or is not valid
/// yet; a text that is no certificate is left to the handshake.
void check_own_validity(const std::string& cert_pem);

}  // namespace flynn::federated
