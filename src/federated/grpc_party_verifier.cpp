#include "federated/grpc_party_verifier.hpp"

#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <fmt/format.h>

#include "federated/openssl_util.hpp"
#include "federated/relayed_text.hpp"
#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

// OpenSSL's default security level on Debian (and the level an SSL_CTX verifies a peer's
// chain at, when gRPC verified it): keys and signatures of at least 112-bit strength.
constexpr int kAuthLevel = 2;
// The refusals logged one by one; after that one line in 100 (a flood of bad handshakes
// must not flood the log).
constexpr std::uint64_t kRefusalsLogged = 32;

// What an OpenSSL verification error means for a party's certificate.
std::string cause(int code) {
  switch (code) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "unknown CA: the party's certificate is not signed by --ca";
    case X509_V_ERR_CERT_HAS_EXPIRED: return "the party's certificate has expired";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the party's certificate is not valid yet (issued for later, or a clock is wrong)";
    case X509_V_ERR_INVALID_PURPOSE:
      return "wrong extended key usage: the certificate is not a party's (no clientAuth; a coordinator's?)";
    default: {
      const char* text = X509_verify_cert_error_string(code);
      return fmt::format("certificate verify failed: {} (OpenSSL code {})", text ? text : "unknown error", code);
    }
  }
}

class PartyVerifier final : public grpc::experimental::ExternalCertificateVerifier {
 public:
  PartyVerifier(std::string ca_pem, std::shared_ptr<HandshakeRefusals> refusals)
      : ca_pem_(std::move(ca_pem)), refusals_(std::move(refusals)) {}

  // Synchronous: the check is a few signature verifications.
  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request, std::function<void(grpc::Status)>,
              grpc::Status* sync_status) override {
    const std::string leaf(request->peer_cert().data(), request->peer_cert().size());
    const std::string chain(request->peer_cert_full_chain().data(), request->peer_cert_full_chain().size());
    std::string why;
    try {
      why = party_certificate_refusal(ca_pem_, leaf, chain);
    } catch (const std::exception& e) {
      why = std::string("cannot check the certificate: ") + e.what();  // refused all the same
    }
    if (why.empty()) {
      *sync_status = grpc::Status::OK;
      return true;
    }
    const std::string cn = claimed_common_name(leaf);
    refusals_->report(fmt::format("refused a connection in the TLS handshake: {} (the certificate presented names "
                                  "{})",
                                  why, cn.empty() ? "no CN" : "'" + cn + "'"));
    *sync_status = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, why);
    return true;
  }
  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest*) override {}

 private:
  const std::string ca_pem_;
  const std::shared_ptr<HandshakeRefusals> refusals_;
};

}  // namespace

std::string party_certificate_refusal(const std::string& ca_pem, const std::string& leaf_pem,
                                      const std::string& chain_pem) {
  const std::vector<ossl::Cert> cas = ossl::read_certificates(ca_pem);
  if (cas.empty()) throw Error("the CA certificate (--ca) holds no certificate");
  if (leaf_pem.empty()) return "the party presented no certificate";
  const ossl::Cert leaf = ossl::first_certificate(leaf_pem);
  if (!leaf) return "the party's certificate is not an X.509 certificate";
  ossl::Store store(X509_STORE_new());
  if (!store) throw Error("cannot make a certificate store: " + ossl::openssl_error());
  for (const ossl::Cert& c : cas)
    if (X509_STORE_add_cert(store.get(), c.get()) != 1) throw Error("cannot use --ca: " + ossl::openssl_error());
  // What the peer sent besides its leaf may help build the chain, never anchor it.
  ossl::CertStack untrusted(sk_X509_new_null());
  if (!untrusted) throw Error("cannot make a certificate stack: " + ossl::openssl_error());
  for (ossl::Cert& c : ossl::read_certificates(chain_pem)) {
    if (X509_cmp(c.get(), leaf.get()) == 0) continue;
    if (sk_X509_push(untrusted.get(), c.get()) <= 0) throw Error("cannot make a certificate stack");
    (void)c.release();  // the stack owns it now
  }
  ossl::StoreCtx ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), untrusted.get()) != 1)
    throw Error("cannot check the certificate: " + ossl::openssl_error());
  // As an SSL server verifies its client: the "ssl_client" purpose (extended key usage
  // clientAuth when the certificate lists any) and trust, at the default security level.
  // (The purpose and trust set explicitly too, as `openssl verify -purpose sslclient` does.)
  if (X509_STORE_CTX_set_default(ctx.get(), "ssl_client") != 1 ||
      X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT) != 1 ||
      X509_STORE_CTX_set_trust(ctx.get(), X509_TRUST_SSL_CLIENT) != 1)
    throw Error("cannot set the verification's purpose: " + ossl::openssl_error());
  X509_VERIFY_PARAM_set_auth_level(X509_STORE_CTX_get0_param(ctx.get()), kAuthLevel);
  const int verified = X509_verify_cert(ctx.get());
  if (verified == 1) return "";
  const int code = X509_STORE_CTX_get_error(ctx.get());
  // A failure without an error code is a failure all the same.
  return code == X509_V_OK ? "certificate verify failed: " + ossl::openssl_error() : cause(code);
}

std::string claimed_common_name(const std::string& leaf_pem) {
  const ossl::Cert c = ossl::first_certificate(leaf_pem);
  if (!c) return "";
  X509_NAME* name = X509_get_subject_name(c.get());
  const int i = name ? X509_NAME_get_index_by_NID(name, NID_commonName, -1) : -1;
  if (i < 0) return "";
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, data);
  if (n < 0) return "";
  const std::string text(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  return inert_text(text, 100);
}

void HandshakeRefusals::report(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++count_;
  if (!log_ || (count_ > kRefusalsLogged && count_ % 100 != 0)) return;
  log_(count_ > kRefusalsLogged ? fmt::format("{} ({} refused in the handshake so far)", line, count_) : line);
}

void HandshakeRefusals::detach() {
  std::lock_guard<std::mutex> lock(mutex_);
  log_ = nullptr;
}

std::shared_ptr<grpc::experimental::CertificateVerifier> party_certificate_verifier(
    const std::string& ca_pem, std::shared_ptr<HandshakeRefusals> refusals) {
  return grpc::experimental::ExternalCertificateVerifier::Create<PartyVerifier>(ca_pem, std::move(refusals));
}

}  // namespace flynn::federated
