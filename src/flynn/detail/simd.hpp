#pragma once
// What the runtime SIMD dispatch chose, and the machine's peak addition rate: the
// roofline `flynn bench` compares the FlyHash kernel with.
#include <cstddef>
#include <string>

namespace flynn::detail::simd {

/// The Highway target the kernels run on (e.g. "AVX3_ZEN4", "AVX2", "EMU128").
std::string target_name();

/// Lane types of the FlyHash kernels: int16 sums of bytes widened on load (pixels),
/// int16, float.
enum class Lane { Uint8ToInt16, Int16, Float32 };

/// Additions per second of one core running a plain streaming-add loop: eight
/// independent vector accumulators summing an L1-resident buffer of the lane's storage
/// type, i.e. one (widening) load and one add per vector, like the FlyHash kernel's inner
/// loop. Runs for about `seconds`.
double peak_add_rate(Lane lane, double seconds = 0.5);

}  // namespace flynn::detail::simd
