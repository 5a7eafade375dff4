#pragma once
// A party's TLS key as a signing key, and another party's certificate as a verifying key
// (internal): parsed once, then used for every signature of a federation — the key
// binding, the transcript and every relayed block (key_binding.hpp, grpc_transcript.hpp).
// SHA-256 with the key's type (RSA PKCS#1 v1.5, ECDSA), or the key's own scheme for
// Ed25519/Ed448.
#include <memory>
#include <string>
#include <string_view>

namespace flynn::federated {

/// The private key of a PEM file.
class SigningKey {
 public:
  /// Throws flynn::Error "cannot read the private key to sign with: …".
  explicit SigningKey(const std::string& private_key_pem);
  ~SigningKey();
  SigningKey(SigningKey&&) noexcept;
  SigningKey& operator=(SigningKey&&) noexcept;

  /// The signature of `message`. Throws flynn::Error when signing fails.
  std::string sign(std::string_view message) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The public key of the first certificate of a PEM text (no chain check: see
/// verify_party_certificate in key_binding.hpp).
class VerifyingKey {
 public:
  /// Throws flynn::Error "its certificate is missing or unreadable" (or has no usable key).
  explicit VerifyingKey(const std::string& certificate_pem);
  ~VerifyingKey();
  VerifyingKey(VerifyingKey&&) noexcept;
  VerifyingKey& operator=(VerifyingKey&&) noexcept;

  /// Whether `signature` is this key's signature of `message`.
  bool verifies(std::string_view message, std::string_view signature) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flynn::federated
