#include "federated/certificate_issuer.hpp"

#include <arpa/inet.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

using ossl::openssl_error;

void check(bool ok, const char* what) {
  if (!ok) throw Error(fmt::format("cannot {}: {}", what, openssl_error()));
}

ossl::Key new_key() {
  ossl::Key key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  check(key != nullptr, "make an EC P-256 key");
  return key;
}

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string key_pem(EVP_PKEY* key) {
  ossl::Bio bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1, "write a key");
  return bio_text(bio.get());
}

std::string cert_pem(X509* cert) {
  ossl::Bio bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_X509(bio.get(), cert) == 1, "write a certificate");
  return bio_text(bio.get());
}

std::string serial_hex(X509* cert) {
  ossl::Big bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  ossl::OsslString hex(BN_bn2hex(bn.get()));
  return hex.get();
}

// A random positive 127-bit serial: unique without a serial file.
void set_random_serial(X509* cert) {
  unsigned char bytes[16];
  check(RAND_bytes(bytes, sizeof bytes) == 1, "draw a serial number");
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;
  ossl::Big bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  check(bn && BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert)) != nullptr, "set a serial number");
}

// The unsigned certificate of `cn` for `key`, valid from five minutes ago (clock skew
// between sites) for `days` days.
ossl::Cert new_certificate(const std::string& cn, EVP_PKEY* key, int days) {
  ossl::Cert cert(X509_new());
  check(cert && X509_set_version(cert.get(), 2) == 1, "make a certificate");
  set_random_serial(cert.get());
  check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300) != nullptr &&
            X509_time_adj_ex(X509_getm_notAfter(cert.get()), days, 0, nullptr) != nullptr,
        "set a validity period");
  check(X509_set_pubkey(cert.get(), key) == 1, "set a public key");
  X509_NAME* name = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()),
                                   -1, -1, 0) == 1,
        "set a common name");
  return cert;
}

void add_extensions(X509* cert, X509* issuer, const std::vector<std::pair<int, std::string>>& extensions) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  for (const auto& [nid, value] : extensions) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    check(ext != nullptr, "make a certificate extension");
    const int added = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    check(added == 1, "add a certificate extension");
  }
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

IssuedPem CertificateIssuer::create_ca(const std::string& common_name, int days) {
  ossl::Key key = new_key();
  ossl::Cert cert = new_certificate(common_name, key.get(), days);
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) == 1, "set the issuer");
  add_extensions(cert.get(), cert.get(),
                 {{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                  {NID_key_usage, "critical,keyCertSign,cRLSign"},
                  {NID_subject_key_identifier, "hash"}});
  check(X509_sign(cert.get(), key.get(), EVP_sha256()) > 0, "sign the CA certificate");
  return {cert_pem(cert.get()), key_pem(key.get()), serial_hex(cert.get())};
}

CertificateIssuer::CertificateIssuer(const std::string& certificate_pem, const std::string& key_pem_text) {
  cert_ = ossl::first_certificate(certificate_pem);
  if (!cert_) throw Error("the CA certificate is not a PEM X.509 certificate");
  ossl::Bio bio = ossl::memory(key_pem_text);
  key_.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key_) throw Error("the CA key is not an unencrypted PEM private key: " + openssl_error());
  if (X509_check_private_key(cert_.get(), key_.get()) != 1)
    throw Error("the CA key is not the key of the CA certificate");
  if (X509_check_ca(cert_.get()) == 0) throw Error("the CA certificate is not a CA's (basicConstraints CA:TRUE)");
}

IssuedPem CertificateIssuer::issue(const std::string& common_name, TlsRole role,
                                   const std::vector<std::string>& alt_names, int days) const {
  ossl::Key key = new_key();
  ossl::Cert cert = new_certificate(common_name, key.get(), days);
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(cert_.get())) == 1, "set the issuer");
  std::vector<std::pair<int, std::string>> ext = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature"},
      {NID_ext_key_usage, role == TlsRole::Server ? "serverAuth" : "clientAuth"},
      {NID_subject_key_identifier, "hash"},
      {NID_authority_key_identifier, "keyid:always"}};
  std::string san;
  for (const std::string& n : alt_names) san += (san.empty() ? "" : ",") + n;
  if (!san.empty()) ext.emplace_back(NID_subject_alt_name, san);
  add_extensions(cert.get(), cert_.get(), ext);
  check(X509_sign(cert.get(), key_.get(), EVP_sha256()) > 0, "sign a certificate");
  return {cert_pem(cert.get()), key_pem(key.get()), serial_hex(cert.get())};
}

std::string CertificateIssuer::revocation_list(const std::vector<std::string>& revoked_serials_hex, int days) const {
  using Crl = ossl::Crl;
  Crl crl(X509_CRL_new());
  check(crl && X509_CRL_set_version(crl.get(), 1) == 1, "make a CRL");
  check(X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(cert_.get())) == 1, "set the CRL's issuer");
  using Time = std::unique_ptr<ASN1_TIME, ossl::Deleter<ASN1_TIME, ASN1_TIME_free>>;
  Time now(X509_gmtime_adj(nullptr, 0)), next(X509_time_adj_ex(nullptr, days, 0, nullptr));
  check(now && next && X509_CRL_set1_lastUpdate(crl.get(), now.get()) == 1 &&
            X509_CRL_set1_nextUpdate(crl.get(), next.get()) == 1,
        "set the CRL's dates");
  for (const std::string& hex : revoked_serials_hex) {
    BIGNUM* raw = nullptr;
    check(BN_hex2bn(&raw, hex.c_str()) > 0, "read a serial number");
    ossl::Big bn(raw);
    using Int = std::unique_ptr<ASN1_INTEGER, ossl::Deleter<ASN1_INTEGER, ASN1_INTEGER_free>>;
    Int serial(BN_to_ASN1_INTEGER(bn.get(), nullptr));
    X509_REVOKED* r = X509_REVOKED_new();
    check(r && serial && X509_REVOKED_set_serialNumber(r, serial.get()) == 1 &&
              X509_REVOKED_set_revocationDate(r, now.get()) == 1 && X509_CRL_add0_revoked(crl.get(), r) == 1,
          "list a revoked certificate");
  }
  check(X509_CRL_sort(crl.get()) == 1 && X509_CRL_sign(crl.get(), key_.get(), EVP_sha256()) > 0, "sign the CRL");
  ossl::Bio bio(BIO_new(BIO_s_mem()));
  check(PEM_write_bio_X509_CRL(bio.get(), crl.get()) == 1, "write the CRL");
  return bio_text(bio.get());
}

std::vector<std::string> alt_names_for_host(const std::string& host) {
  if (host == "127.0.0.1" || host == "localhost" || host == "::1")
    return {"IP:127.0.0.1", "IP:::1", "DNS:localhost"};
  return {(is_ip_literal(host) ? "IP:" : "DNS:") + host};
}

}  // namespace flynn::federated
