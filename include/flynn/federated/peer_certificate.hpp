#pragma once
// Checks of a TLS peer's certificate beyond what the handshake verifies (docs/guide/federated.md,
// "Identity"): its extended key usage, the federation's certificate revocation list, and
// that a certificate a peer quotes is the one it presented. OpenSSL only; the gRPC code
// (grpc_coordinator.cpp, grpc_party.cpp) calls them with the peer's certificate as the TLS
// layer reports it.
//
// Why extended key usage: every certificate of the federation's CA passes the handshake,
// so without it a party's certificate (CN "hospital-a", issued for joining) could serve as
// the coordinator's when `join --server-name hospital-a` is used, and the coordinator's as a
// party's. The coordinator's certificate must carry serverAuth, a party's clientAuth; the
// extension must be present (a certificate without one is "any purpose" to OpenSSL, which
// is exactly the confusion this check removes).
#include <cstddef>
#include <memory>
#include <string>

namespace flynn::federated {

/// The TLS role a certificate is used for.
enum class TlsRole {
  Server,  ///< the coordinator: extendedKeyUsage serverAuth
  Client,  ///< a party: extendedKeyUsage clientAuth
};

/// Throws flynn::Error naming `who` unless the first certificate of `certificate_pem`
/// carries an extendedKeyUsage extension that includes the role's purpose.
void check_extended_key_usage(const std::string& certificate_pem, TlsRole role, const std::string& who);

/// Whether the first certificates of `a_pem` and `b_pem` are the same certificate (equal
/// DER encodings; PEM line breaks and trailing data do not matter). Throws flynn::Error
/// when either is not a PEM X.509 certificate.
bool same_certificate(const std::string& a_pem, const std::string& b_pem);

/// Throws flynn::Error unless `pem` holds at least one parseable X.509 certificate.
void check_certificate_pem(const std::string& pem);

/// A certificate revocation list of the federation's CA (`--crl FILE`, PEM).
class RevocationList {
 public:
  /// Parses `crl_pem` (from `source`, named in errors) and checks that it was issued and
  /// signed by a certificate of `ca_pem` and is current (its nextUpdate, when present, is
  /// not past). Throws flynn::Error naming the problem.
  RevocationList(const std::string& crl_pem, const std::string& ca_pem, std::string source);
  ~RevocationList();
  RevocationList(RevocationList&&) noexcept;
  RevocationList& operator=(RevocationList&&) noexcept;
  RevocationList(const RevocationList&) = delete;
  RevocationList& operator=(const RevocationList&) = delete;

  /// Reads the PEM file `path` and the CA file `ca_path` (errors name the flag).
  static RevocationList load(const std::string& path, const std::string& ca_path);

  /// Throws flynn::Error naming `who`, the certificate's serial and the revocation date
  /// when the first certificate of `certificate_pem` is listed.
  void check(const std::string& certificate_pem, const std::string& who) const;

  /// Number of revoked certificates listed.
  std::size_t size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flynn::federated
