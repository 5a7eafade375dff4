// Secure aggregation's building blocks: X25519 agreement, HKDF, the ChaCha20 keystream,
// and pairwise masks that cancel exactly in the sum (modulo 2^32 and 2^64).
#include <gtest/gtest.h>

#include <memory>
#include <numeric>

#include "flynn/error.hpp"
#include "flynn/federated/secure_aggregation.hpp"

namespace flynn::federated {
namespace {

struct Parties {
  std::vector<std::unique_ptr<X25519KeyPair>> keys;
  std::vector<std::string> publics;
  std::vector<PairwiseMasker> maskers;
  explicit Parties(int n, const std::string& federation = "0123456789abcdef") {
    for (int i = 0; i < n; ++i) {
      keys.push_back(std::make_unique<X25519KeyPair>());
      publics.push_back(keys.back()->public_key());
    }
    for (int i = 0; i < n; ++i) maskers.emplace_back(i, *keys[i], publics, federation);
  }
};

TEST(SecureAggregation, X25519PartiesAgreeOnTheSharedSecret) {
  X25519KeyPair a, b, c;
  EXPECT_EQ(a.public_key().size(), kX25519KeyBytes);
  EXPECT_EQ(a.shared_secret(b.public_key()), b.shared_secret(a.public_key()));
  EXPECT_NE(a.shared_secret(b.public_key()), a.shared_secret(c.public_key()));
  EXPECT_THROW(a.shared_secret("short"), Error);
  // A low-order point (all zeros) gives an all-zero secret, which OpenSSL refuses.
  EXPECT_THROW(a.shared_secret(std::string(32, '\0')), Error);
}

TEST(SecureAggregation, HkdfMatchesRfc5869TestCase1) {
  const std::string ikm(22, '\x0b');
  const std::string salt = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::string info = {'\xf0', '\xf1', '\xf2', '\xf3', '\xf4', '\xf5', '\xf6', '\xf7', '\xf8', '\xf9'};
  const std::string okm = hkdf_sha256(ikm, salt, info, 42);
  std::string hex;
  for (unsigned char ch : okm) hex += "0123456789abcdef"[ch >> 4], hex += "0123456789abcdef"[ch & 15];
  EXPECT_EQ(hex, "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
}

TEST(SecureAggregation, KeystreamDependsOnKeyAndNonce) {
  const std::string k1(32, 'a'), k2(32, 'b');
  EXPECT_EQ(chacha20_keystream(k1, 1, 64), chacha20_keystream(k1, 1, 64));
  EXPECT_NE(chacha20_keystream(k1, 1, 64), chacha20_keystream(k1, 2, 64));
  EXPECT_NE(chacha20_keystream(k1, 1, 64), chacha20_keystream(k2, 1, 64));
  // A prefix of a longer stream is the shorter stream (one keystream per round).
  EXPECT_EQ(chacha20_keystream(k1, 7, 1000).substr(0, 100), chacha20_keystream(k1, 7, 100));
}

template <class T>
void expect_masks_cancel(int n, std::size_t len) {
  Parties ps(n);
  std::vector<std::vector<T>> values(n, std::vector<T>(len));
  std::vector<T> expected(len, 0);
  for (int p = 0; p < n; ++p)
    for (std::size_t i = 0; i < len; ++i) {
      // Include values near the top, so the sum wraps like the unmasked one.
      values[p][i] = static_cast<T>(i * 7 + p) + (i % 5 == 0 ? static_cast<T>(~T{0} - 3) : T{0});
      expected[i] += values[p][i];
    }
  std::vector<T> sum(len, 0);
  std::size_t changed = 0;
  for (int p = 0; p < n; ++p) {
    std::vector<T> masked = values[p];
    ps.maskers[p].mask(std::span<T>(masked), "sum 42");
    for (std::size_t i = 0; i < len; ++i) {
      changed += masked[i] != values[p][i];
      sum[i] += masked[i];
    }
  }
  EXPECT_EQ(sum, expected);
  EXPECT_GT(changed, static_cast<std::size_t>(n) * len * 9 / 10);  // masks hide (almost) every value
}

TEST(SecureAggregation, MasksCancelInTheSum) {
  expect_masks_cancel<std::uint32_t>(2, 100);
  expect_masks_cancel<std::uint32_t>(5, 1000);
  expect_masks_cancel<std::uint64_t>(16, 300);
}

// The pads of a sum depend on everything its label holds: two different sums never
// share a pad, not even in a common prefix (before protocol 3 the pads of the k-th sum
// were one keystream whatever its length, so a 3-word sum and a 768-word one shared their
// first 3 words of pad).
TEST(SecureAggregation, PadsAreBoundToTheSumTheyHide) {
  Parties ps(3);
  const std::string config(32, 'c');
  const SumLabel base{"0123456789abcdef", config, 4, 8, 64, "row totals"};
  const auto pad = [&](const SumLabel& label, std::size_t n) {
    std::vector<std::uint64_t> v(n, 0);
    ps.maskers[0].mask(std::span<std::uint64_t>(v), encode(label));
    return v;
  };
  const std::vector<std::uint64_t> a = pad(base, 64);
  EXPECT_EQ(a, pad(base, 64)) << "the same sum, the same pad";
  std::vector<SumLabel> others(7, base);
  const std::string other_config(32, 'd');  // outlives the labels that view it
  others[0].federation_id = "fedcba9876543210";
  others[1].configuration = other_config;
  others[2].seq = 5;
  others[3].word_bytes = 4;
  others[4].values = 768;
  others[5].purpose = "dp release";
  others[6].purpose = "row totalz";
  for (std::size_t i = 0; i < others.size(); ++i) {
    const std::vector<std::uint64_t> b = pad(others[i], 768);
    std::size_t equal = 0;
    for (std::size_t k = 0; k < 64; ++k) equal += a[k] == b[k];
    EXPECT_EQ(equal, 0u) << "label field " << i << " changed, yet the pads share words";
  }
  // Masks of another federation (another federation id) differ too.
  Parties other(3, "fedcba9876543210");
  std::vector<std::uint64_t> c(64, 0);
  other.maskers[0].mask(std::span<std::uint64_t>(c), encode(base));
  EXPECT_NE(a, c);
}

TEST(SecureAggregation, RefusesInconsistentKeyLists) {
  X25519KeyPair a, b;
  // The coordinator must list this party's own key at its rank…
  EXPECT_THROW(PairwiseMasker(0, a, {b.public_key(), a.public_key()}, "s"), Error);
  // …and nowhere else (a replayed key would make masks cancel early).
  EXPECT_THROW(PairwiseMasker(0, a, {a.public_key(), a.public_key()}, "s"), Error);
  EXPECT_THROW(PairwiseMasker(2, a, {a.public_key(), b.public_key()}, "s"), Error);
}

}  // namespace
}  // namespace flynn::federated
