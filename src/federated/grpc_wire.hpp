#pragma once
// Pieces shared by the gRPC coordinator and party (internal; includes gRPC and the
// generated service): PEM loading and channel/server tuning. The messages themselves, and
// what flynn checks about them, are wire_messages.hpp (protobuf only).
#include <grpcpp/grpcpp.h>

#include <string>

#include "federated/wire_messages.hpp"
#include "federation.grpc.pb.h"
#include "flynn/federated/grpc.hpp"

namespace flynn::federated::grpcwire {

/// The contents of a PEM file; throws flynn::Error "cannot read the <what> <path>: …".
std::string read_pem(const std::string& path, const char* what);

/// HTTP/2 keepalive: a peer that stops answering (killed, suspended, network gone) is
/// detected within about 15 s even when no collective is in flight.
inline constexpr int kKeepaliveMs = 10000;
inline constexpr int kKeepaliveTimeoutMs = 5000;

}  // namespace flynn::federated::grpcwire
