#pragma once
// The cryptographically secure random source of flynn: the only generator that may feed
// differential-privacy noise.
//
// Why a separate type: the seeded generator (flynn::SeededRng) is public by design — the
// seed travels with the model so that every party rebuilds the same lifting matrix — so
// noise drawn from it could be recomputed by anyone holding the model, and the privacy
// guarantee would be void. SecureRng shares no base class, conversion or template
// interface with SeededRng: the DP functions (flynn/federated/dp.hpp) take a SecureRng&
// and nothing else, so passing the seeded generator there is a compile error (the tests
// static_assert it).
//
// Source: OpenSSL's RAND_bytes (OpenSSL 3: a CTR-DRBG seeded from the operating system's
// entropy source and reseeded automatically, fork-safe). Bytes are fetched in blocks of
// 4 KiB to amortise the call; a failure of RAND_bytes throws flynn::Error rather than
// continuing with predictable bytes. Instances cannot be seeded or copied (a copy would
// replay the same buffered bytes); use one per thread.
//
// All samplers built on it are exact: integers are unbiased (rejection), Bernoulli trials
// with rational or exp(−rational) probabilities are exact (Canonne, Kamath & Steinke,
// "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Algorithms 1–2), so the
// discrete Laplace noise in dp.hpp involves no floating point at all.
#include <array>
#include <cstddef>
#include <cstdint>

namespace flynn::federated {

/// Unsigned 128-bit integer, used for exact rational probabilities.
using u128 = unsigned __int128;

class SecureRng {
 public:
  /// Checks that OpenSSL's generator is seeded (throws flynn::Error otherwise).
  SecureRng();
  SecureRng(const SecureRng&) = delete;
  SecureRng& operator=(const SecureRng&) = delete;
  SecureRng(SecureRng&&) = default;
  SecureRng& operator=(SecureRng&&) = default;
  ~SecureRng();  ///< wipes the unread buffered bytes

  /// 64 uniformly random bits.
  std::uint64_t next_u64();

  /// Uniform integer in [0, bound), bound > 0; unbiased (Lemire's multiply-and-reject).
  std::uint64_t uniform_below(std::uint64_t bound);
  /// Uniform integer in [0, bound), bound > 0, for 128-bit bounds; unbiased (draws
  /// bit_width(bound − 1) random bits and rejects values ≥ bound: < 2 draws expected).
  u128 uniform_below_u128(u128 bound);

  /// Uniform double in the OPEN interval (0, 1): (k + ½)·2^-53 for a uniform 53-bit k.
  /// Never 0 or 1, so log(u) and log(−log u) are finite (used for Gumbel keys).
  double uniform_open01();

  /// Exact Bernoulli(num/den), 0 ≤ num ≤ den, den > 0.
  bool bernoulli(u128 num, u128 den);
  /// Exact Bernoulli(exp(−num/den)) for num ≥ 0, den > 0 (any ratio, also above 1):
  /// CKS 2020 Algorithm 1, looped over the integer part.
  bool bernoulli_exp_neg(u128 num, u128 den);

  /// Random bytes consumed so far (for tests and cost accounting).
  std::uint64_t bytes_drawn() const { return drawn_; }

 private:
  void refill();
  std::array<unsigned char, 4096> buffer_{};
  std::size_t pos_ = 4096;  ///< next unread byte; == size means empty
  std::uint64_t drawn_ = 0;
};

}  // namespace flynn::federated
