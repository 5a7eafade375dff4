#include "federated/openssl_util.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "flynn/error.hpp"

namespace flynn::federated::ossl {

void free_openssl_string(char* p) { OPENSSL_free(p); }

Bio memory(std::string_view bytes) {
  return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

std::vector<Cert> read_certificates(std::string_view pem) {
  Bio bio = memory(pem);
  std::vector<Cert> out;
  while (X509* c = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) out.emplace_back(c);
  ERR_clear_error();  // the end of the PEM data is reported as an error
  return out;
}

Cert first_certificate(std::string_view pem) {
  Bio bio = memory(pem);
  Cert c(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  return c;
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) throw Error("OpenSSL SHA-256 failed");
}

Sha256& Sha256::update(std::string_view bytes) {
  if (!bytes.empty() && EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) != 1)
    throw Error("OpenSSL SHA-256 failed");
  return *this;
}

std::string Sha256::finish() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), md, &len) != 1 || len != 32 ||
      EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
    throw Error("OpenSSL SHA-256 failed");
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string sha256(std::string_view bytes) { return Sha256().update(bytes).finish(); }

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

}  // namespace flynn::federated::ossl
