#pragma once
// Internal to flynn::baselines: squared L2 distance between float vectors on the SIMD
// target Highway picks at run time (the FlyHash kernels' dispatch), for the hnswlib peer,
// whose own kernels are chosen when it is compiled (SSE only in a portable build).
#include <cstddef>

namespace flynn::baselines::detail {

/// Σ (a[j] − b[j])² over j < n, in float.
float l2_squared(const float* a, const float* b, std::size_t n);

}  // namespace flynn::baselines::detail
