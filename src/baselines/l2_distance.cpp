// Squared L2 distance (l2_distance.hpp), dispatched like the FlyHash kernels.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "baselines/l2_distance.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <cstddef>

#include "baselines/l2_distance.hpp"

HWY_BEFORE_NAMESPACE();
namespace flynn::baselines::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

float L2Squared(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t N = hn::Lanes(d);
  // Four independent accumulators hide the fused multiply-add latency.
  auto s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  std::size_t j = 0;
  for (; j + 4 * N <= n; j += 4 * N) {
    const auto d0 = hn::Sub(hn::LoadU(d, a + j), hn::LoadU(d, b + j));
    const auto d1 = hn::Sub(hn::LoadU(d, a + j + N), hn::LoadU(d, b + j + N));
    const auto d2 = hn::Sub(hn::LoadU(d, a + j + 2 * N), hn::LoadU(d, b + j + 2 * N));
    const auto d3 = hn::Sub(hn::LoadU(d, a + j + 3 * N), hn::LoadU(d, b + j + 3 * N));
    s0 = hn::MulAdd(d0, d0, s0);
    s1 = hn::MulAdd(d1, d1, s1);
    s2 = hn::MulAdd(d2, d2, s2);
    s3 = hn::MulAdd(d3, d3, s3);
  }
  for (; j + N <= n; j += N) {
    const auto dj = hn::Sub(hn::LoadU(d, a + j), hn::LoadU(d, b + j));
    s0 = hn::MulAdd(dj, dj, s0);
  }
  float sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
  for (; j < n; ++j) {
    const float t = a[j] - b[j];
    sum += t * t;
  }
  return sum;
}

}  // namespace HWY_NAMESPACE
}  // namespace flynn::baselines::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace flynn::baselines::detail {

HWY_EXPORT(L2Squared);

float l2_squared(const float* a, const float* b, std::size_t n) {
  return HWY_DYNAMIC_DISPATCH(L2Squared)(a, b, n);
}

}  // namespace flynn::baselines::detail
#endif  // HWY_ONCE
