#pragma once
// OpenSSL for the federated layer (internal): the one home of the RAII owners of OpenSSL
// objects, the error text, PEM certificate reading and SHA-256. key_binding.cpp,
// peer_certificate.cpp, secure_aggregation.cpp, the signed blocks of the gRPC transport and
// every digest of the party protocol use them, so that each object has one owner type and
// each digest one implementation.
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace flynn::federated::ossl {

/// Frees an OpenSSL object with its own free function.
template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};

using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using KeyCtx = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, Deleter<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Crl = std::unique_ptr<X509_CRL, Deleter<X509_CRL, X509_CRL_free>>;
using Store = std::unique_ptr<X509_STORE, Deleter<X509_STORE, X509_STORE_free>>;
using StoreCtx = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;
using Big = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;

/// A stack of certificates that owns them.
struct CertStackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
using CertStack = std::unique_ptr<STACK_OF(X509), CertStackFree>;

/// A string OpenSSL allocated (BN_bn2hex, …).
void free_openssl_string(char* p);
using OsslString = std::unique_ptr<char, Deleter<char, free_openssl_string>>;

/// A read-only memory BIO over `bytes` (which must outlive it).
Bio memory(std::string_view bytes);

/// The first error on OpenSSL's queue as text ("unknown OpenSSL error" when empty); clears
/// the queue.
std::string openssl_error();

/// Every certificate of `pem`, in order (none when it holds none).
std::vector<Cert> read_certificates(std::string_view pem);

/// The first certificate of `pem`, or null.
Cert first_certificate(std::string_view pem);

/// SHA-256 over bytes given piece by piece; reusable after finish().
class Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view bytes);
  /// The 32-byte digest of everything given since the last finish(); starts afresh.
  std::string finish();

 private:
  MdCtx ctx_;
};

/// The 32-byte SHA-256 of `bytes`. Throws flynn::Error when OpenSSL fails.
std::string sha256(std::string_view bytes);

/// Lower-case hexadecimal of `bytes`.
std::string hex(std::string_view bytes);

}  // namespace flynn::federated::ossl
