#pragma once
// Binding a party's X25519 key-agreement key to its TLS certificate (docs/guide/federated.md,
// "Secure aggregation", threat model).
//
// Why: the coordinator relays every party's X25519 public key in the Welcome. Without a
// binding, a malicious coordinator could hand party A its own key in place of party B's,
// derive the A–B mask, and so unmask A's counts. With it, each party signs its X25519
// public key with the private key of its TLS client certificate (which the federation's
// CA issued for its CN), the coordinator relays the certificates and signatures, and every
// party checks, before it masks anything, that each other party's key was signed by a
// certificate of the federation's CA whose CN is the name the Welcome gives that party.
// A swapped key fails the check and the round aborts. (What it does not stop: a
// coordinator that also holds a certificate of the same CA can join as a party under its
// own CN; parties see every CN in the Welcome. docs/guide/federated.md discusses it.)
//
// The signed message is "flynn federated X25519 key v1", a NUL, the CN, a NUL, then the
// 32-byte key: domain-separated, so the signature cannot be replayed as anything else, and
// bound to the name. Signatures use SHA-256 with the certificate's key type (RSA PKCS#1
// v1.5, ECDSA), or the key's own scheme for Ed25519/Ed448. OpenSSL only.
//
// This Join-time binding names no federation (the party signs it before the coordinator
// picks the federation id), so on its own a binding from an earlier federation could be
// replayed. The federation-bound binding is the transcript signature
// (src/federated/grpc_transcript.hpp): every party signs everything the Welcome told it,
// its own fresh key and the federation id included, and checks every other party's
// signature of the same — a replayed key makes the transcripts differ. The generic
// sign/verify below serve both (and every signed block).
#include <string>
#include <string_view>

namespace flynn::federated {

/// The signature, by the PEM private key `private_key_pem` (the party's TLS key), of the
/// binding of `public_key` (its X25519 key) to `cn`. Throws flynn::Error when the key
/// cannot be read or signing fails.
std::string sign_exchange_key(const std::string& private_key_pem, const std::string& cn,
                              std::string_view public_key);

/// The signature of `message` by the PEM private key `private_key_pem` (SHA-256 with the
/// key's type, or Ed25519/Ed448's own scheme). Throws flynn::Error when the key cannot be
/// read or signing fails.
std::string sign_with_certificate_key(const std::string& private_key_pem, std::string_view message);

/// Whether `signature` is the signature of `message` by the key of the first certificate
/// in `certificate_pem` (no chain check: see verify_party_certificate). Throws flynn::Error
/// when the certificate is unreadable.
bool signed_by_certificate(const std::string& certificate_pem, std::string_view message,
                           std::string_view signature);

/// Checks that `certificate_pem` (a leaf certificate, optionally followed by intermediates)
/// chains to a certificate of `ca_pem` and that its subject CN is `expected_cn`. Throws
/// flynn::Error naming what failed (unreadable, not issued by the CA, other CN).
void verify_party_certificate(const std::string& ca_pem, const std::string& certificate_pem,
                              const std::string& expected_cn);

/// The subject CN of the first certificate in `certificate_pem`. Throws flynn::Error when
/// it is unreadable or has no CN.
std::string certificate_common_name(const std::string& certificate_pem);

/// Checks that `certificate_pem` (a leaf certificate, optionally followed by intermediates)
/// chains to a certificate of `ca_pem`, that its subject CN is `expected_cn`, and that
/// `signature` is its key's signature of the binding of `public_key` to that CN. Throws
/// flynn::Error naming what failed (unreadable certificate, not issued by the CA, other
/// CN, bad signature).
void verify_exchange_key(const std::string& ca_pem, const std::string& certificate_pem,
                         const std::string& expected_cn, std::string_view public_key,
                         std::string_view signature);

}  // namespace flynn::federated
