#pragma once
// What the runtime SIMD dispatch chose, and the machine's peak addition rate: the
// roofline `flynn bench` compares the FlyHash kernel with.
#include <cstddef>
#include <string>

namespace flynn::simd {

/// The Highway target the kernels run on (e.g. "AVX3_ZEN4", "AVX2", "EMU128").
std::string target_name();

enum class Lane { Int16, Float32 };

/// Additions per second of one core running a plain streaming-add loop: eight
/// independent vector accumulators summing an L1-resident buffer, i.e. one load and one
/// add per vector, like the FlyHash kernel's inner loop. Runs for about `seconds`.
double peak_add_rate(Lane lane, double seconds = 0.5);

}  // namespace flynn::simd
