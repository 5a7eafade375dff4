#pragma once
// What the runtime SIMD dispatch chose, and the lane types of the FlyHash kernels.
#include <cstddef>
#include <string>

namespace flynn::detail::simd {

/// The Highway target the kernels run on (e.g. "AVX3_ZEN4", "AVX2", "EMU128").
std::string target_name();

/// Lane types of the FlyHash kernels: int16 sums of bytes widened on load (pixels),
/// int16, float.
enum class Lane { Uint8ToInt16, Int16, Float32 };

}  // namespace flynn::detail::simd
