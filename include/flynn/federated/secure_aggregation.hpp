#pragma once
// Secure aggregation by pairwise masking (Bonawitz et al., CCS 2017, without the dropout
// recovery): the coordinator of a gRPC federation learns only the SUM of the parties'
// integer vectors, never one party's vector.
//
// Setup (once per federation): every party draws a fresh X25519 key pair and sends its
// public key to the coordinator, which hands every party the list of all public keys
// (by rank) and a random 16-byte federation id. Parties i and j then derive the same
// 32-byte pairwise key
//     k_ij = HKDF-SHA256(ikm = X25519(sk_i, pk_j), salt = federation id,
//                        info = "flynn secure aggregation v2" ‖ min(i,j) ‖ max(i,j)).
// Masking (every all-reduce): the collective's label (SumLabel: the federation id, the
// digest of the configuration every party agreed on, the collective's sequence number,
// word width, length and purpose) gives each pair a pad of its own,
//     pad_ij = ChaCha20(key = HKDF-SHA256(k_ij, info = "flynn secure aggregation pad v2" ‖
//                       label), nonce 0),
// and party i adds, modulo 2^32 (or 2^64), pad_ij for every other party j when i < j and
// subtracts it when i > j. In the sum over all parties every pad appears once with + and
// once with −, so the sum is exact; each single masked vector is uniformly distributed to
// anyone who lacks the party's pairwise keys (ChaCha20 is a PRF), in particular to the
// coordinator.
//
// Why the pads are bound to everything that describes the sum: with pads that depend on
// the pair and a counter only, a lying coordinator that runs parties of different
// configurations (a party without DP beside two with DP) pairs one party's private vector
// with the others' vectors of known content (the zero entries of a DP release) in the
// same counter slot, and the pads cancel in the prefix they share: the private vector is
// unmasked. Bound to the label, two different vectors never share a pad: a party whose
// label differs (another configuration, purpose, length or width) masks with unrelated
// pads, and the coordinator's sums are noise.
//
// Threat model (docs/guide/federated.md): an honest-but-curious coordinator (follows the
// protocol, reads everything it receives) learns the sum only. Up to t = τ − 2 colluding
// parties (with or without the coordinator) learn the sum of the honest parties' vectors,
// nothing about any single honest party. A party that drops out after masking makes the
// sum unrecoverable: the federation aborts before anything is unmasked and names it.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flynn::federated {

/// Size of an X25519 public key and of a pairwise key, in bytes.
inline constexpr std::size_t kX25519KeyBytes = 32;

/// An X25519 key pair (OpenSSL EVP_PKEY_X25519), freshly drawn from the OS's CSPRNG.
class X25519KeyPair {
 public:
  X25519KeyPair();
  ~X25519KeyPair();
  X25519KeyPair(const X25519KeyPair&) = delete;
  X25519KeyPair& operator=(const X25519KeyPair&) = delete;

  /// The raw 32-byte public key (sent to the coordinator).
  const std::string& public_key() const { return public_key_; }
  /// The 32-byte X25519 shared secret with the holder of `peer_public_key`; throws
  /// flynn::Error when the peer key is malformed (wrong size, or a low-order point).
  std::string shared_secret(std::string_view peer_public_key) const;

 private:
  void* key_ = nullptr;  ///< EVP_PKEY*, kept opaque so that no OpenSSL header leaks
  std::string public_key_;
};

/// HKDF-SHA256 (RFC 5869) of `ikm` with `salt` and `info`, `length` bytes.
std::string hkdf_sha256(std::string_view ikm, std::string_view salt, std::string_view info,
                        std::size_t length);

/// `bytes` bytes of ChaCha20 keystream for a 32-byte key and a 64-bit nonce (block
/// counter starting at 0).
std::string chacha20_keystream(std::string_view key, std::uint64_t nonce, std::size_t bytes);

/// What one masked sum is bound to (every field enters its pads).
struct SumLabel {
  std::string_view federation_id;  ///< the Welcome's 16 random bytes
  /// SHA-256 of the configuration every party agreed on (the fingerprint and seed; 32
  /// bytes), so parties of different configurations never share a pad.
  std::string_view configuration;
  std::uint64_t seq = 0;           ///< the collective's sequence number
  std::uint32_t word_bytes = 0;    ///< 4 or 8
  std::uint64_t values = 0;        ///< words summed
  std::string_view purpose;        ///< "row totals", "counts", … (party.hpp)
};

/// The bytes of `label` hashed into the pads: a tag, then each field length-prefixed or
/// in fixed-width little-endian.
std::string encode(const SumLabel& label);

/// One party's masks: holds its pairwise keys with every other party.
class PairwiseMasker {
 public:
  /// `public_keys[r]` is party r's public key (this party's own at index `rank`).
  /// Throws flynn::Error on a malformed key or a key that equals this party's own at
  /// another rank (a replayed key would make two masks cancel early).
  PairwiseMasker(int rank, const X25519KeyPair& mine, const std::vector<std::string>& public_keys,
                 std::string_view federation_id);

  int rank() const { return rank_; }
  int parties() const { return static_cast<int>(keys_.size()); }

  /// Adds this party's pads for the sum labelled `label` (encode(SumLabel), or any other
  /// bytes every party uses alike) in place, mod 2^32 / 2^64. Summing every party's
  /// masked vector of the same label gives the sum of the unmasked ones.
  void mask(std::span<std::uint32_t> values, std::string_view label) const;
  void mask(std::span<std::uint64_t> values, std::string_view label) const;

 private:
  template <class T>
  void apply(std::span<T> values, std::string_view label) const;

  int rank_;
  std::vector<std::string> keys_;  ///< pairwise key with each rank ("" for this party)
};

}  // namespace flynn::federated
