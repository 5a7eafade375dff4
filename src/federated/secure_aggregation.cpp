#include "flynn/federated/secure_aggregation.hpp"

#include <openssl/evp.h>
#include <openssl/kdf.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "core/io/byte_codec.hpp"
#include "federated/openssl_util.hpp"
#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

EVP_PKEY* pkey(void* p) { return static_cast<EVP_PKEY*>(p); }

[[noreturn]] void fail(const char* what) {
  throw Error(fmt::format("secure aggregation: OpenSSL {} failed", what));
}

}  // namespace

X25519KeyPair::X25519KeyPair() {
  ossl::KeyCtx ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, nullptr));
  EVP_PKEY* k = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) <= 0 || EVP_PKEY_keygen(ctx.get(), &k) <= 0)
    fail("X25519 key generation");
  key_ = k;
  public_key_.resize(kX25519KeyBytes);
  std::size_t len = public_key_.size();
  if (EVP_PKEY_get_raw_public_key(k, reinterpret_cast<unsigned char*>(public_key_.data()), &len) <= 0 ||
      len != kX25519KeyBytes)
    fail("X25519 public key export");
}

X25519KeyPair::~X25519KeyPair() { EVP_PKEY_free(pkey(key_)); }

std::string X25519KeyPair::shared_secret(std::string_view peer_public_key) const {
  if (peer_public_key.size() != kX25519KeyBytes)
    throw Error(fmt::format("secure aggregation: a peer's public key has {} bytes, not {}",
                            peer_public_key.size(), kX25519KeyBytes));
  ossl::Key peer(EVP_PKEY_new_raw_public_key(
      EVP_PKEY_X25519, nullptr, reinterpret_cast<const unsigned char*>(peer_public_key.data()),
      peer_public_key.size()));
  if (!peer) throw Error("secure aggregation: a peer's public key is not an X25519 key");
  ossl::KeyCtx ctx(EVP_PKEY_CTX_new(pkey(key_), nullptr));
  std::string secret(kX25519KeyBytes, '\0');
  std::size_t len = secret.size();
  // OpenSSL refuses low-order peer points here (an all-zero shared secret).
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 || EVP_PKEY_derive_set_peer(ctx.get(), peer.get()) <= 0 ||
      EVP_PKEY_derive(ctx.get(), reinterpret_cast<unsigned char*>(secret.data()), &len) <= 0 ||
      len != kX25519KeyBytes)
    throw Error("secure aggregation: X25519 key agreement with a peer failed (malformed key?)");
  return secret;
}

std::string hkdf_sha256(std::string_view ikm, std::string_view salt, std::string_view info,
                        std::size_t length) {
  ossl::KeyCtx ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr));
  std::string out(length, '\0');
  std::size_t len = length;
  const auto u = [](std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); };
  if (!ctx || EVP_PKEY_derive_init(ctx.get()) <= 0 ||
      EVP_PKEY_CTX_set_hkdf_md(ctx.get(), EVP_sha256()) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_salt(ctx.get(), u(salt), static_cast<int>(salt.size())) <= 0 ||
      EVP_PKEY_CTX_set1_hkdf_key(ctx.get(), u(ikm), static_cast<int>(ikm.size())) <= 0 ||
      EVP_PKEY_CTX_add1_hkdf_info(ctx.get(), u(info), static_cast<int>(info.size())) <= 0 ||
      EVP_PKEY_derive(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len) <= 0 ||
      len != length)
    fail("HKDF-SHA256");
  return out;
}

namespace {

// Writes `bytes` bytes of ChaCha20 keystream (key, 64-bit nonce, block counter from 0) to
// `out`, which the caller zeroed: encrypting zeros in place yields the keystream itself,
// with no extra buffer.
void chacha20_into(std::string_view key, std::uint64_t nonce, unsigned char* out, std::size_t bytes) {
  if (key.size() != 32) throw Error("secure aggregation: a ChaCha20 key has 32 bytes");
  // OpenSSL's 16-byte ChaCha20 IV: 32-bit little-endian block counter, then the nonce.
  unsigned char iv[16] = {0};
  for (int i = 0; i < 8; ++i) iv[4 + i] = static_cast<unsigned char>((nonce >> (8 * i)) & 0xff);
  ossl::CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_chacha20(), nullptr,
                                 reinterpret_cast<const unsigned char*>(key.data()), iv) <= 0)
    fail("ChaCha20 init");
  constexpr std::size_t kChunk = std::size_t{1} << 30;
  for (std::size_t pos = 0; pos < bytes; pos += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, bytes - pos));
    int written = 0;
    if (EVP_EncryptUpdate(ctx.get(), out + pos, &written, out + pos, n) <= 0 || written != n)
      fail("ChaCha20");
  }
}

}  // namespace

std::string chacha20_keystream(std::string_view key, std::uint64_t nonce, std::size_t bytes) {
  std::string out(bytes, '\0');
  chacha20_into(key, nonce, reinterpret_cast<unsigned char*>(out.data()), bytes);
  return out;
}

std::string encode(const SumLabel& label) {
  io::ByteWriter w;
  w.bytes("flynn masked sum v2");
  w.u8(0);
  w.str(label.federation_id);
  w.str(label.configuration);
  w.u64(label.seq);
  w.u32(label.word_bytes);
  w.u64(label.values);
  w.str(label.purpose);
  return std::move(w.data());
}

PairwiseMasker::PairwiseMasker(int rank, const X25519KeyPair& mine,
                               const std::vector<std::string>& public_keys,
                               std::string_view federation_id)
    : rank_(rank), keys_(public_keys.size()) {
  const int n = static_cast<int>(public_keys.size());
  if (rank < 0 || rank >= n)
    throw Error(fmt::format("secure aggregation: rank {} is not one of {} parties", rank, n));
  if (public_keys[rank] != mine.public_key())
    throw Error("secure aggregation: the coordinator did not list this party's own public key");
  for (int j = 0; j < n; ++j) {
    if (j == rank) continue;
    if (public_keys[j] == mine.public_key())
      throw Error(fmt::format("secure aggregation: party {} announced this party's public key", j));
    io::ByteWriter info;
    info.bytes("flynn secure aggregation v2");
    info.u32(static_cast<std::uint32_t>(std::min(rank, j)));
    info.u32(static_cast<std::uint32_t>(std::max(rank, j)));
    keys_[j] = hkdf_sha256(mine.shared_secret(public_keys[j]), federation_id, info.data(), 32);
  }
}

template <class T>
void PairwiseMasker::apply(std::span<T> values, std::string_view label) const {
  const std::size_t bytes = values.size() * sizeof(T);
  std::vector<T> mask(values.size());
  const std::string info = std::string("flynn secure aggregation pad v2") + '\0' + std::string(label);
  for (int j = 0; j < parties(); ++j) {
    if (j == rank_) continue;
    std::fill(mask.begin(), mask.end(), T{0});
    // One key per pair and sum: a pad is never reused for another vector.
    chacha20_into(hkdf_sha256(keys_[j], "", info, 32), 0, reinterpret_cast<unsigned char*>(mask.data()), bytes);
    // Little-endian words on every platform, so that mixed-endian parties agree.
    if constexpr (std::endian::native == std::endian::big)
      for (T& v : mask) {
        T r = 0;
        for (std::size_t b = 0; b < sizeof(T); ++b) r = (r << 8) | ((v >> (8 * b)) & 0xff);
        v = r;
      }
    if (rank_ < j)
      for (std::size_t i = 0; i < values.size(); ++i) values[i] += mask[i];
    else
      for (std::size_t i = 0; i < values.size(); ++i) values[i] -= mask[i];
  }
}

void PairwiseMasker::mask(std::span<std::uint32_t> values, std::string_view label) const {
  apply(values, label);
}
void PairwiseMasker::mask(std::span<std::uint64_t> values, std::string_view label) const {
  apply(values, label);
}

}  // namespace flynn::federated
