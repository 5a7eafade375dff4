#pragma once
// The coordinator's check of a party's certificate in the TLS handshake (internal to the
// gRPC transport).
//
// Why flynn verifies it itself: when gRPC's own verification (OpenSSL inside gRPC) refuses a
// handshake, all it reports is "certificate verify failed", without the cause or the
// certificate's subject. So the server asks for the client certificate without verifying it
// (GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_BUT_DONT_VERIFY: TLS still requires one,
// and the client's CertificateVerify still proves it holds the certificate's key) and this
// verifier makes the whole verification with OpenSSL's library API, as OpenSSL's built-in
// verification of an SSL server does (X509_verify_cert against --ca only, the "ssl_client"
// purpose and trust, security level 2), then refuses the handshake naming the cause and the
// CN the certificate claims. Anything it cannot read is refused. Revocation (--crl) is
// checked when the stream opens, as before: there the refused party is told why, and a
// revoked party of the roster stops the federation (grpc_coordinator.cpp).
#include <grpcpp/security/tls_certificate_verifier.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace flynn::federated {

/// Why `leaf_pem` (with the untrusted certificates of `chain_pem`, which may be empty) is
/// not a party's certificate issued by a CA of `ca_pem`, "" when it is: "unknown CA: …",
/// "… has expired", "… is not valid yet …", "wrong extended key usage: …", or OpenSSL's text.
/// Throws flynn::Error when `ca_pem` holds no certificate.
std::string party_certificate_refusal(const std::string& ca_pem, const std::string& leaf_pem,
                                      const std::string& chain_pem);

/// The CN a certificate claims (escaped for a log line), "" when none or unreadable.
std::string claimed_common_name(const std::string& leaf_pem);

/// Where the verifier reports a refused handshake; the coordinator detaches it when it stops
/// (gRPC may keep the verifier a little longer than the coordinator lives).
class HandshakeRefusals {
 public:
  explicit HandshakeRefusals(std::function<void(const std::string&)> log) : log_(std::move(log)) {}
  void report(const std::string& line);
  void detach();

 private:
  std::mutex mutex_;
  std::function<void(const std::string&)> log_;
  std::uint64_t count_ = 0;
};

/// The verifier given to gRPC's TLS server credentials.
std::shared_ptr<grpc::experimental::CertificateVerifier> party_certificate_verifier(
    const std::string& ca_pem, std::shared_ptr<HandshakeRefusals> refusals);

}  // namespace flynn::federated
