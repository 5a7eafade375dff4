#pragma once
// Pieces shared by the gRPC coordinator and party (internal; includes the generated
// protobuf code): PEM loading, channel/server tuning, the settings message, and the
// little-endian vector codec of the summed collectives.
#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "federation.grpc.pb.h"
#include "flynn/federated/grpc.hpp"

namespace flynn::federated::grpcwire {

namespace pb = ::flynn::federation::v1;

/// The contents of a PEM file; throws flynn::Error "cannot read the <what> <path>: …".
std::string read_pem(const std::string& path, const char* what);

/// HTTP/2 keepalive: a peer that stops answering (killed, suspended, network gone) is
/// detected within about 15 s even when no collective is in flight.
inline constexpr int kKeepaliveMs = 10000;
inline constexpr int kKeepaliveTimeoutMs = 5000;

/// SharedSettings <-> its message: the labels and settings_to_text's pairs; from_proto is
/// as strict as settings_from_text (throws flynn::Error naming the setting).
pb::Settings to_proto(const SharedSettings& s);
SharedSettings from_proto(const pb::Settings& p);

/// Little-endian encoding of a vector of uint32/uint64 (the payload of SUM32/SUM64).
template <class T>
std::string encode_words(std::span<const T> values);
/// Decodes into `out` (sizes must match; throws flynn::Error otherwise).
template <class T>
void decode_words(std::string_view bytes, std::span<T> out);

/// Name of an operation for messages ("all-gather", …).
const char* op_name(pb::Op op);

}  // namespace flynn::federated::grpcwire
