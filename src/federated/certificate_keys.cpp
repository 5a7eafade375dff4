#include "federated/certificate_keys.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>

#include "federated/openssl_util.hpp"
#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

// SHA-256 except for the schemes that hash internally (Ed25519, Ed448).
const EVP_MD* digest_for(EVP_PKEY* key) {
  const int id = EVP_PKEY_base_id(key);
  return id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448 ? nullptr : EVP_sha256();
}

}  // namespace

struct SigningKey::Impl {
  ossl::Key key;
};

SigningKey::SigningKey(const std::string& private_key_pem) : impl_(std::make_unique<Impl>()) {
  ossl::Bio bio = ossl::memory(private_key_pem);
  impl_->key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!impl_->key) throw Error("cannot read the private key to sign with: " + ossl::openssl_error());
}

SigningKey::~SigningKey() = default;
SigningKey::SigningKey(SigningKey&&) noexcept = default;
SigningKey& SigningKey::operator=(SigningKey&&) noexcept = default;

std::string SigningKey::sign(std::string_view message) const {
  EVP_PKEY* key = impl_->key.get();
  ossl::MdCtx ctx(EVP_MD_CTX_new());
  std::size_t len = 0;
  const auto* m = reinterpret_cast<const unsigned char*>(message.data());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, digest_for(key), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, m, message.size()) != 1)
    throw Error("cannot sign: " + ossl::openssl_error());
  std::string sig(len, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()), &len, m, message.size()) != 1)
    throw Error("cannot sign: " + ossl::openssl_error());
  sig.resize(len);
  return sig;
}

struct VerifyingKey::Impl {
  ossl::Key key;
};

VerifyingKey::VerifyingKey(const std::string& certificate_pem) : impl_(std::make_unique<Impl>()) {
  const ossl::Cert cert = ossl::first_certificate(certificate_pem);
  if (!cert) throw Error("its certificate is missing or unreadable");
  impl_->key.reset(X509_get_pubkey(cert.get()));
  if (!impl_->key) throw Error("its certificate has no usable public key: " + ossl::openssl_error());
}

VerifyingKey::~VerifyingKey() = default;
VerifyingKey::VerifyingKey(VerifyingKey&&) noexcept = default;
VerifyingKey& VerifyingKey::operator=(VerifyingKey&&) noexcept = default;

bool VerifyingKey::verifies(std::string_view message, std::string_view signature) const {
  EVP_PKEY* key = impl_->key.get();
  ossl::MdCtx md(EVP_MD_CTX_new());
  if (!md || EVP_DigestVerifyInit(md.get(), nullptr, digest_for(key), nullptr, key) != 1)
    throw Error("cannot check the signature: " + ossl::openssl_error());
  const int ok = EVP_DigestVerify(md.get(), reinterpret_cast<const unsigned char*>(signature.data()),
                                  signature.size(), reinterpret_cast<const unsigned char*>(message.data()),
                                  message.size());
  ERR_clear_error();  // a bad signature leaves an error on the queue
  return ok == 1;
}

}  // namespace flynn::federated
