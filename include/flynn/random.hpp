#pragma once
// The seeded, portable random generator of flynn.
//
// Everything that must be reproducible from a seed — the lifting matrix, the densify
// signs, cross-validation folds, synthetic data, federated splits — draws from SeededRng.
// It is fully specified here so that any build on any platform produces the same numbers:
//
//   * mix64(z): the SplitMix64 output function (Steele, Lea & Flood 2014):
//       z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB;
//       z ^= z >> 31.
//   * next_u64(): state += 0x9E3779B97F4A7C15; return mix64(state)   (SplitMix64).
//   * A keyed stream (seed, stream, index) starts from
//       state = mix64(seed ^ mix64(stream + mix64(index)))
//     so that, e.g., row j of the lifting matrix is a function of (seed, j) alone and does
//     not depend on the order or the thread in which rows are generated.
//   * uniform_below(n): Lemire's multiply-and-reject method ("Fast random integer
//     generation in an interval", 2019): exact and unbiased, one 64×64→128-bit multiply,
//     rejection only when the low half falls below (2^64 − n) mod n.
//   * uniform01(): (next_u64() >> 11) · 2^-53, in [0, 1).
//
// The C++ standard distributions (std::uniform_int_distribution, std::shuffle, …) are
// implementation-defined and are never used for anything that must be reproducible.
//
// SeededRng is deliberately NOT usable for differential-privacy noise: that needs the
// cryptographically secure source in flynn/federated/secure_random.hpp, a distinct type.
#include <cstddef>
#include <cstdint>
#include <utility>

namespace flynn {

/// SplitMix64's output (finalisation) function; a bijection on 64-bit integers.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ULL;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return z;
}

/// Stream tags: one per purpose, so that two uses of the same seed never share numbers.
enum class RngStream : std::uint64_t {
  LiftingMatrix = 1,   ///< index = row of M
  DensifySigns = 2,    ///< index = 0
  Folds = 3,           ///< index = repetition
  Synthetic = 4,       ///< index = dataset number
  PredictTieBreak = 5, ///< index = row being predicted
  Split = 6,           ///< federated data splits
  Search = 7,          ///< hyper-parameter search designs
  Baseline = 8,        ///< baselines' own randomness (SBFC projection, LR/MLP init)
  SeedDraw = 9,        ///< drawing a fresh seed from a user seed
  LiftingSigns = 10,   ///< index = row of M (signed-lifting variants)
  PaperHalfSeed = 11,  ///< index = 0: the seed of a paper-half variant's second half
  PairCodes = 12,      ///< index = 0: the key of second-order filters' pair order and cells
  CalibrationSample = 13,  ///< index = 0: the key that picks the rows a calibration fit scores
};

/// Deterministic generator (SplitMix64). Cheap to copy; not thread-safe (use one per
/// thread or one per keyed stream).
class SeededRng {
 public:
  /// A generator whose state is `seed` itself.
  explicit SeededRng(std::uint64_t seed) : state_(seed) {}

  /// The generator of stream (seed, tag, index); see the header comment.
  static SeededRng keyed(std::uint64_t seed, RngStream tag, std::uint64_t index) {
    return SeededRng(
        mix64(seed ^ mix64(static_cast<std::uint64_t>(tag) + mix64(index))));
  }

  std::uint64_t next_u64() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return mix64(state_);
  }

  /// Uniform integer in [0, bound); bound must be > 0. Unbiased (Lemire 2019).
  std::uint64_t uniform_below(std::uint64_t bound) {
    unsigned __int128 product = static_cast<unsigned __int128>(next_u64()) * bound;
    std::uint64_t low = static_cast<std::uint64_t>(product);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        product = static_cast<unsigned __int128>(next_u64()) * bound;
        low = static_cast<std::uint64_t>(product);
      }
    }
    return static_cast<std::uint64_t>(product >> 64);
  }

  /// Uniform double in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  /// Standard normal deviate (Marsaglia's polar method). Uses libm's log/sqrt, so values
  /// may differ in the last bit across C libraries; only used where that is harmless
  /// (synthetic data, baselines' initialisation), never for the lifting matrix.
  double normal();

 private:
  std::uint64_t state_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

/// Fisher–Yates shuffle of `items` driven by `rng` (Durstenfeld's order: the last slot
/// first). Portable, unlike std::shuffle: the same generator state gives the same order
/// on every platform. The one shuffle every part of flynn uses.
template <class Container>
void shuffle(Container& items, SeededRng& rng) {
  using std::swap;
  for (std::size_t i = items.size(); i > 1; --i) swap(items[i - 1], items[rng.uniform_below(i)]);
}

}  // namespace flynn
