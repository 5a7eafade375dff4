#include "federated/grpc_join_check.hpp"

#include <fmt/format.h>

#include "flynn/error.hpp"
#include "flynn/federated/grpc.hpp"
#include "flynn/federated/peer_certificate.hpp"

namespace flynn::federated {

std::optional<JoinRefusal> check_join(const grpcwire::pb::PartyMessage& first, const std::string& tls_certificate) {
  using K = JoinRefusal::Kind;
  if (!first.has_join()) return JoinRefusal{K::InvalidArgument, "the first message was not a join"};
  const grpcwire::pb::Join& j = first.join();
  if (j.protocol() != kGrpcProtocolVersion)
    return JoinRefusal{K::FailedPrecondition,
                       fmt::format("it speaks federation protocol {}, the coordinator {}: every process must run "
                                   "the same flynn release", j.protocol(), kGrpcProtocolVersion)};
  if (j.public_key().size() != 32) return JoinRefusal{K::InvalidArgument, "its X25519 public key is not 32 bytes"};
  if (j.certificate().size() > kMaxJoinCertificateBytes)
    return JoinRefusal{K::InvalidArgument, fmt::format("the certificate in its Join is {} bytes, more than the {} "
                                                       "allowed", j.certificate().size(), kMaxJoinCertificateBytes)};
  if (j.key_signature().size() > kMaxKeySignatureBytes)
    return JoinRefusal{K::InvalidArgument, fmt::format("the key signature in its Join is {} bytes, more than the {} "
                                                       "allowed", j.key_signature().size(), kMaxKeySignatureBytes)};
  try {
    check_certificate_pem(j.certificate());
  } catch (const Error& e) {
    return JoinRefusal{K::InvalidArgument, fmt::format("the certificate in its Join: {}", e.what())};
  }
  bool same = false;
  try {
    same = same_certificate(j.certificate(), tls_certificate);
  } catch (const Error&) {
  }
  if (!same)
    return JoinRefusal{K::PermissionDenied,
                       "the certificate in its Join is not the one it presented in the TLS handshake"};
  return std::nullopt;
}

}  // namespace flynn::federated
