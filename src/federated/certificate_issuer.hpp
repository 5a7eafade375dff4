#pragma once
// A small certificate authority for a federation (internal; `flynn federated provision` and
// `revoke`): EC P-256 keys, the CA's self-signed certificate, site certificates with the
// extended key usage of their TLS role and the coordinator's subjectAltName, and the CA's
// revocation list. OpenSSL's library API only.
#include <cstdint>
#include <string>
#include <vector>

#include "federated/openssl_util.hpp"
#include "flynn/federated/peer_certificate.hpp"  // TlsRole

namespace flynn::federated {

/// A private key and its certificate, both PEM.
struct IssuedPem {
  std::string certificate;
  std::string key;
  std::string serial_hex;  ///< the certificate's serial number, upper-case hexadecimal
};

/// A CA: its certificate and key, parsed once to sign with.
class CertificateIssuer {
 public:
  /// A new CA named `common_name`, valid `days` days from five minutes ago.
  static IssuedPem create_ca(const std::string& common_name, int days);
  /// The CA of `certificate_pem` and `key_pem`. Throws flynn::Error when either does not
  /// parse, the key is not the certificate's, or the certificate is not a CA's.
  CertificateIssuer(const std::string& certificate_pem, const std::string& key_pem);

  /// A certificate for `common_name` in `role` with a fresh key, valid `days` days.
  /// `alt_names` ("IP:127.0.0.1", "DNS:localhost") become its subjectAltName.
  IssuedPem issue(const std::string& common_name, TlsRole role, const std::vector<std::string>& alt_names,
                  int days) const;

  /// The CA's CRL (PEM) listing `revoked_serials_hex` (revoked `now`), valid `days` days.
  std::string revocation_list(const std::vector<std::string>& revoked_serials_hex, int days) const;

 private:
  ossl::Cert cert_;
  ossl::Key key_;
};

/// "IP:…" for an IPv4/IPv6 literal `host`, else "DNS:…"; a loopback host also gets the other
/// loopback spellings (127.0.0.1, localhost), so either works as --server.
std::vector<std::string> alt_names_for_host(const std::string& host);

}  // namespace flynn::federated
