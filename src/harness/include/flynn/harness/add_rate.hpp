#pragma once
// The machine's peak addition rate: the roofline `flynn bench` compares the FlyHash kernel
// with (src/harness/add_rate_kernel.cpp).
#include "flynn/detail/simd.hpp"

namespace flynn::detail::simd {

/// Additions per second of one core running a plain streaming-add loop: eight
/// independent vector accumulators summing an L1-resident buffer of the lane's storage
/// type, i.e. one (widening) load and one add per vector, like the FlyHash kernel's inner
/// loop. Runs for about `seconds`.
double peak_add_rate(Lane lane, double seconds = 0.5);

}  // namespace flynn::detail::simd
