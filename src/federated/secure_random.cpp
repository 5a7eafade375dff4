#include "flynn/federated/secure_random.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "flynn/error.hpp"

namespace flynn::federated {

namespace {

int bit_width_u128(u128 v) {
  const auto hi = static_cast<std::uint64_t>(v >> 64);
  if (hi) return 64 + std::bit_width(hi);
  return std::bit_width(static_cast<std::uint64_t>(v));
}

}  // namespace

SecureRng::SecureRng() {
  if (RAND_status() != 1)
    throw Error("OpenSSL's random generator is not seeded: no secure randomness for DP noise");
}

SecureRng::~SecureRng() {
  // The unread bytes would be future noise: do not leave them in freed memory.
  OPENSSL_cleanse(buffer_.data(), buffer_.size());
}

void SecureRng::refill() {
  if (RAND_bytes(buffer_.data(), static_cast<int>(buffer_.size())) != 1) {
    const unsigned long code = ERR_get_error();
    char text[256] = "unknown error";
    if (code) ERR_error_string_n(code, text, sizeof text);
    throw Error(fmt::format("OpenSSL RAND_bytes failed ({}): no secure randomness", text));
  }
  pos_ = 0;
}

std::uint64_t SecureRng::next_u64() {
  if (buffer_.size() - pos_ < 8) refill();
  std::uint64_t v;
  std::memcpy(&v, buffer_.data() + pos_, 8);
  // Consumed bytes are erased so that a memory dump reveals no past noise either.
  std::memset(buffer_.data() + pos_, 0, 8);
  pos_ += 8;
  drawn_ += 8;
  return v;
}

std::uint64_t SecureRng::uniform_below(std::uint64_t bound) {
  FLYNN_ASSERT(bound > 0);
  u128 product = static_cast<u128>(next_u64()) * bound;
  auto low = static_cast<std::uint64_t>(product);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      product = static_cast<u128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

u128 SecureRng::uniform_below_u128(u128 bound) {
  FLYNN_ASSERT(bound > 0);
  if (bound == 1) return 0;
  const int bits = bit_width_u128(bound - 1);
  const u128 mask = bits == 128 ? ~u128{0} : ((u128{1} << bits) - 1);
  for (;;) {
    u128 v = static_cast<u128>(next_u64());
    if (bits > 64) v |= static_cast<u128>(next_u64()) << 64;
    v &= mask;
    if (v < bound) return v;
  }
}

double SecureRng::uniform_open01() {
  return (static_cast<double>(next_u64() >> 11) + 0.5) * 0x1.0p-53;
}

bool SecureRng::bernoulli(u128 num, u128 den) {
  FLYNN_ASSERT(den > 0 && num <= den);
  if (num == 0) return false;
  if (num == den) return true;
  return uniform_below_u128(den) < num;
}

bool SecureRng::bernoulli_exp_neg(u128 num, u128 den) {
  FLYNN_ASSERT(den > 0);
  // exp(−x) = exp(−1)^⌊x⌋ · exp(−frac(x)): independent trials, all must succeed.
  u128 whole = num / den;
  const u128 frac = num % den;
  // exp(−γ) for γ = a/b in [0, 1] (CKS 2020, Algorithm 1): draw A_k ~ Bernoulli(γ/k) for
  // k = 1, 2, … until one fails; the result is "the first failure came at an odd k".
  // Bernoulli(γ/k) is Bernoulli(γ) ∧ Bernoulli(1/k) (independent), which avoids ever
  // forming b·k in 128 bits.
  auto exp_neg_at_most_one = [this](u128 a, u128 b) {
    std::uint64_t k = 1;
    for (;;) {
      const bool success = bernoulli(a, b) && uniform_below(k) == 0;
      if (!success) break;
      ++k;
    }
    return (k & 1) == 1;
  };
  while (whole > 0) {
    if (!exp_neg_at_most_one(1, 1)) return false;
    --whole;
  }
  return exp_neg_at_most_one(frac, den);
}

}  // namespace flynn::federated
