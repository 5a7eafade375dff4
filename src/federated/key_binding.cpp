#include "flynn/federated/key_binding.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>
#include <vector>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using Store = std::unique_ptr<X509_STORE, Deleter<X509_STORE, X509_STORE_free>>;
using StoreCtx = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;
struct CertStackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
using CertStack = std::unique_ptr<STACK_OF(X509), CertStackFree>;

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

Bio memory(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::vector<Cert> read_certificates(const std::string& pem) {
  Bio bio = memory(pem);
  std::vector<Cert> out;
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) out.emplace_back(c);
  ERR_clear_error();  // the end of the PEM data is reported as an error
  return out;
}

std::string message(const std::string& cn, std::string_view public_key) {
  std::string m = "flynn federated X25519 key v1";
  m.push_back('\0');
  m += cn;
  m.push_back('\0');
  m.append(public_key);
  return m;
}

// SHA-256 except for the schemes that hash internally (Ed25519, Ed448).
const EVP_MD* digest_for(EVP_PKEY* key) {
  const int id = EVP_PKEY_base_id(key);
  return id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448 ? nullptr : EVP_sha256();
}

std::string common_name(X509* cert) {
  char buf[1024];
  const int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
  return n < 0 ? std::string() : std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

std::string certificate_common_name(const std::string& certificate_pem) {
  const std::vector<Cert> chain = read_certificates(certificate_pem);
  if (chain.empty()) throw Error("the certificate is unreadable");
  const std::string cn = common_name(chain[0].get());
  if (cn.empty()) throw Error("the certificate has no subject CN");
  return cn;
}

std::string sign_with_certificate_key(const std::string& private_key_pem, std::string_view message) {
  Bio bio = memory(private_key_pem);
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) throw Error("cannot read the private key to sign with: " + openssl_error());
  MdCtx ctx(EVP_MD_CTX_new());
  std::size_t len = 0;
  const auto* m = reinterpret_cast<const unsigned char*>(message.data());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, digest_for(key.get()), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, m, message.size()) != 1)
    throw Error("cannot sign: " + openssl_error());
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, m, message.size()) != 1)
    throw Error("cannot sign: " + openssl_error());
  sig.resize(len);
  return sig;
}

bool signed_by_certificate(const std::string& certificate_pem, std::string_view message,
                           std::string_view signature) {
  const std::vector<Cert> chain = read_certificates(certificate_pem);
  if (chain.empty()) throw Error("its certificate is missing or unreadable");
  Key key(X509_get_pubkey(chain[0].get()));
  if (!key) throw Error("its certificate has no usable public key: " + openssl_error());
  MdCtx md(EVP_MD_CTX_new());
  if (!md || EVP_DigestVerifyInit(md.get(), nullptr, digest_for(key.get()), nullptr, key.get()) != 1)
    throw Error("cannot check the signature: " + openssl_error());
  const int ok = EVP_DigestVerify(md.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                                  signature.size(), reinterpret_cast<const unsigned char*>(message.data()),
                                  message.size());
  ERR_clear_error();  // a bad signature leaves an error on the queue
  return ok == 1;
}

void verify_party_certificate(const std::string& ca_pem, const std::string& certificate_pem,
                              const std::string& expected_cn) {
  std::vector<Cert> chain = read_certificates(certificate_pem);
  if (chain.empty()) throw Error("its certificate is missing or unreadable");
  const std::vector<Cert> cas = read_certificates(ca_pem);
  if (cas.empty()) throw Error("the CA certificate is unreadable");
  Store store(X509_STORE_new());
  for (const Cert& c : cas) X509_STORE_add_cert(store.get(), c.get());
  CertStack untrusted(sk_X509_new_null());
  for (std::size_t i = 1; i < chain.size(); ++i) {
    X509_up_ref(chain[i].get());
    sk_X509_push(untrusted.get(), chain[i].get());
  }
  StoreCtx ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), chain[0].get(), untrusted.get()) != 1)
    throw Error("cannot check the certificate: " + openssl_error());
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
