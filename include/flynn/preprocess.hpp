#pragma once
// Row preprocessing before FlyHash: L2 normalisation and the randomised Hadamard
// "densify" transform of the reference implementation.
#include <cstdint>
#include <vector>

#include "flynn/config.hpp"

namespace flynn {

/// Applies a config's preprocessing to single rows. Deterministic: the densify signs come
/// from SeededRng stream (seed, DensifySigns, 0), bit j of successive 64-bit draws giving
/// the sign of input column j (1 → −1).
class Preprocessor {
 public:
  Preprocessor(Preprocess kind, std::uint32_t input_dim, std::uint64_t seed);

  Preprocess kind() const { return kind_; }
  std::uint32_t input_dim() const { return input_dim_; }
  /// input_dim, or the padded power of two for Densify.
  std::uint32_t output_dim() const { return output_dim_; }

  /// Writes the transformed row (output_dim() floats) to `out`. `in` and `out` must not
  /// overlap. Norms and transforms are computed in double, in a fixed order, and rounded
  /// once to float, so the result is the same on every build.
  void apply(const float* in, float* out) const;

 private:
  Preprocess kind_;
  std::uint32_t input_dim_;
  std::uint32_t output_dim_;
  std::vector<std::int8_t> signs_;  // ±1 per input column (Densify only)
};

/// In-place fast Walsh–Hadamard transform (unnormalised) of a power-of-two length array.
void fast_walsh_hadamard(double* values, std::uint32_t length);

}  // namespace flynn
