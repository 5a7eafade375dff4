#include "flynn/federated/key_binding.hpp"

#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <vector>

#include <fmt/format.h>

#include "federated/certificate_keys.hpp"
#include "federated/openssl_util.hpp"
#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

std::string message(const std::string& cn, std::string_view public_key) {
  std::string m = "flynn federated X25519 key v1";
  m.push_back('\0');
  m += cn;
  m.push_back('\0');
  m.append(public_key);
  return m;
}

std::string common_name(X509* cert) {
  char buf[1024];
  const int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
  return n < 0 ? std::string() : std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

std::string certificate_common_name(const std::string& certificate_pem) {
  const std::vector<ossl::Cert> chain = ossl::read_certificates(certificate_pem);
  if (chain.empty()) throw Error("the certificate is unreadable");
  const std::string cn = common_name(chain[0].get());
  if (cn.empty()) throw Error("the certificate has no subject CN");
  return cn;
}

std::string sign_with_certificate_key(const std::string& private_key_pem, std::string_view message) {
  return SigningKey(private_key_pem).sign(message);
}

bool signed_by_certificate(const std::string& certificate_pem, std::string_view message,
                           std::string_view signature) {
  return VerifyingKey(certificate_pem).verifies(message, signature);
}

void verify_party_certificate(const std::string& ca_pem, const std::string& certificate_pem,
                              const std::string& expected_cn) {
  std::vector<ossl::Cert> chain = ossl::read_certificates(certificate_pem);
  if (chain.empty()) throw Error("its certificate is missing or unreadable");
  const std::vector<ossl::Cert> cas = ossl::read_certificates(ca_pem);
  if (cas.empty()) throw Error("the CA certificate is unreadable");
  ossl::Store store(X509_STORE_new());
  for (const ossl::Cert& c : cas) X509_STORE_add_cert(store.get(), c.get());
  ossl::CertStack untrusted(sk_X509_new_null());
  for (std::size_t i = 1; i < chain.size(); ++i) {
    X509_up_ref(chain[i].get());
    sk_X509_push(untrusted.get(), chain[i].get());
  }
  ossl::StoreCtx ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), chain[0].get(), untrusted.get()) != 1)
    throw Error("cannot check the certificate: " + ossl::openssl_error());
  if (X509_verify_cert(ctx.get()) != 1)
    throw Error(fmt::format("its certificate was not issued by the federation's CA ({})",
                            X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()))));
  const std::string cn = common_name(chain[0].get());
  if (cn != expected_cn)
    throw Error(fmt::format("its certificate names '{}', not '{}'", cn, expected_cn));
}

std::string sign_exchange_key(const std::string& private_key_pem, const std::string& cn,
                              std::string_view public_key) {
  try {
    return sign_with_certificate_key(private_key_pem, message(cn, public_key));
  } catch (const Error& e) {
    throw Error(std::string("cannot sign the key-agreement key: ") + e.what());
  }
}

void verify_exchange_key(const std::string& ca_pem, const std::string& certificate_pem,
                         const std::string& expected_cn, std::string_view public_key,
                         std::string_view signature) {
  verify_party_certificate(ca_pem, certificate_pem, expected_cn);
  if (!signed_by_certificate(certificate_pem, message(expected_cn, public_key), signature))
    throw Error("its key-agreement key is not the one its certificate's key signed");
}

}  // namespace flynn::federated
