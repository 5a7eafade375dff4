#include "flynn/federated/peer_certificate.hpp"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "federated/openssl_util.hpp"
#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

using ossl::Bio;
using ossl::Cert;

Cert parse(const std::string& pem, const std::string& who) {
  Cert c = ossl::first_certificate(pem);
  if (!c) throw Error(fmt::format("{}: the certificate is not a PEM X.509 certificate", who));
  return c;
}

std::string der(X509* c) {
  unsigned char* out = nullptr;
  const int n = i2d_X509(c, &out);
  if (n <= 0) throw Error("cannot encode a certificate");
  std::string s(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  OPENSSL_free(out);
  return s;
}

std::string serial_hex(X509* c) {
  ossl::Big bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(c), nullptr));
  if (!bn) return "?";
  ossl::OsslString hex(BN_bn2hex(bn.get()));
  return hex ? std::string(hex.get()) : std::string("?");
}

std::string time_text(const ASN1_TIME* t) {
  if (!t) return "?";
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || ASN1_TIME_print(bio.get(), t) != 1) return "?";
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string read_file(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("cannot read the {} {}: no such file or not readable", what, path));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

void check_extended_key_usage(const std::string& certificate_pem, TlsRole role, const std::string& who) {
  const Cert c = parse(certificate_pem, who);
  const bool server = role == TlsRole::Server;
  const char* usage = server ? "serverAuth (TLS server)" : "clientAuth (TLS client)";
  const char* why = server ? "only a certificate issued for the coordinator may serve the federation"
                           : "only a certificate issued for a party may join the federation";
  // X509_get_extension_flags also computes (and caches) the decoded extensions.
  if ((X509_get_extension_flags(c.get()) & EXFLAG_XKUSAGE) == 0)
    throw Error(fmt::format("{}: its certificate has no extended key usage; it must name {}: {}",
                            who, usage, why));
  const std::uint32_t xku = X509_get_extended_key_usage(c.get());
  if ((xku & (server ? XKU_SSL_SERVER : XKU_SSL_CLIENT)) == 0)
    throw Error(fmt::format("{}: its certificate's extended key usage does not include {}: {}",
                            who, usage, why));
}

bool same_certificate(const std::string& a_pem, const std::string& b_pem) {
  const Cert a = parse(a_pem, "the first certificate");
  const Cert b = parse(b_pem, "the second certificate");
  return der(a.get()) == der(b.get());
}

void check_certificate_pem(const std::string& pem) {
  if (!ossl::first_certificate(pem)) throw Error("it is not a PEM X.509 certificate");
}

struct RevocationList::Impl {
  ossl::Crl crl;
  std::string source;
};

RevocationList::RevocationList(const std::string& crl_pem, const std::string& ca_pem, std::string source)
    : impl_(std::make_unique<Impl>()) {
  impl_->source = std::move(source);
  const std::string& src = impl_->source;
  {
    Bio bio = ossl::memory(crl_pem);
    impl_->crl.reset(PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr));
    ERR_clear_error();
  }
  X509_CRL* crl = impl_->crl.get();
  if (!crl) throw Error(fmt::format("the CRL {} is not a PEM certificate revocation list", src));
  const std::vector<Cert> cas = ossl::read_certificates(ca_pem);
  if (cas.empty()) throw Error("the CA certificate is unreadable");
  // Issued and signed by the federation's CA: a CRL from elsewhere revokes nothing here,
  // and an unsigned one could be forged to hide a revocation.
  bool signed_by_ca = false, issuer_known = false;
  for (const Cert& ca : cas) {
    if (X509_NAME_cmp(X509_CRL_get_issuer(crl), X509_get_subject_name(ca.get())) != 0) continue;
    issuer_known = true;
    ossl::Key key(X509_get_pubkey(ca.get()));
    if (key && X509_CRL_verify(crl, key.get()) == 1) signed_by_ca = true;
    ERR_clear_error();
  }
  if (!issuer_known)
    throw Error(fmt::format("the CRL {} was not issued by the federation's CA (--ca)", src));
  if (!signed_by_ca)
    throw Error(fmt::format("the CRL {} is not signed by the federation's CA (--ca): its signature "
                            "does not verify", src));
  const ASN1_TIME* next = X509_CRL_get0_nextUpdate(crl);
  if (next && X509_cmp_current_time(next) < 0)
    throw Error(fmt::format("the CRL {} expired on {} (its nextUpdate): ask the CA for a current one",
                            src, time_text(next)));
}

RevocationList::~RevocationList() = default;
RevocationList::RevocationList(RevocationList&&) noexcept = default;
RevocationList& RevocationList::operator=(RevocationList&&) noexcept = default;

RevocationList RevocationList::load(const std::string& path, const std::string& ca_path) {
  const std::string crl = read_file(path, "certificate revocation list (--crl)");
  const std::string ca = read_file(ca_path, "CA certificate (--ca)");
  return RevocationList(crl, ca, path);
}

void RevocationList::check(const std::string& certificate_pem, const std::string& who) const {
  const Cert c = parse(certificate_pem, who);
  X509_REVOKED* entry = nullptr;
  // Matches the issuer and the serial number.
  if (X509_CRL_get0_by_cert(impl_->crl.get(), &entry, c.get()) == 1)
    throw Error(fmt::format("{}: its certificate (serial {}) was revoked on {} (CRL {})", who,
                            serial_hex(c.get()), time_text(X509_REVOKED_get0_revocationDate(entry)),
                            impl_->source));
}

std::size_t RevocationList::size() const {
  const STACK_OF(X509_REVOKED)* r = X509_CRL_get_REVOKED(impl_->crl.get());
  return r ? static_cast<std::size_t>(sk_X509_REVOKED_num(r)) : 0;
}

}  // namespace flynn::federated
