// The streaming-add roofline of `flynn bench` (flynn/harness/add_rate.hpp), dispatched like
// the FlyHash kernels so both run on the same SIMD target. Part of the paper harness, not of
// the installed flynn::core: only the speed benchmark measures it.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "harness/add_rate_kernel.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <chrono>
#include <cstdint>
#include <vector>

#include "core/simd_load-inl.h"
#include "flynn/detail/cpu_time.hpp"
#include "flynn/detail/simd.hpp"
#include "flynn/harness/add_rate.hpp"

HWY_BEFORE_NAMESPACE();
namespace flynn::detail::simd {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using kernels::HWY_NAMESPACE::LoadWidened;  // simd_load-inl.h

// Sums `passes` times over buf (len elements, a multiple of 8 vectors); returns a value
// derived from the sums so the work cannot be optimised away. E: storage type, T: lane
// type (E = uint8 widens to int16 on load).
template <typename E, typename T>
double StreamAdd(const E* HWY_RESTRICT buf, std::size_t len, std::size_t passes) {
  const hn::ScalableTag<T> d;
  const std::size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
  for (std::size_t p = 0; p < passes; ++p) {
    for (std::size_t i = 0; i < len; i += 8 * N) {
      a0 = hn::Add(a0, LoadWidened(d, buf + i));
      a1 = hn::Add(a1, LoadWidened(d, buf + i + N));
      a2 = hn::Add(a2, LoadWidened(d, buf + i + 2 * N));
      a3 = hn::Add(a3, LoadWidened(d, buf + i + 3 * N));
      a4 = hn::Add(a4, LoadWidened(d, buf + i + 4 * N));
      a5 = hn::Add(a5, LoadWidened(d, buf + i + 5 * N));
      a6 = hn::Add(a6, LoadWidened(d, buf + i + 6 * N));
      a7 = hn::Add(a7, LoadWidened(d, buf + i + 7 * N));
    }
  }
  auto s = hn::Add(hn::Add(hn::Add(a0, a1), hn::Add(a2, a3)), hn::Add(hn::Add(a4, a5), hn::Add(a6, a7)));
  return static_cast<double>(hn::GetLane(s));
}

double StreamAddU8(const std::uint8_t* buf, std::size_t len, std::size_t passes) {
  return StreamAdd<std::uint8_t, std::int16_t>(buf, len, passes);
}
double StreamAddI16(const std::int16_t* buf, std::size_t len, std::size_t passes) {
  return StreamAdd<std::int16_t, std::int16_t>(buf, len, passes);
}
double StreamAddF32(const float* buf, std::size_t len, std::size_t passes) {
  return StreamAdd<float, float>(buf, len, passes);
}

}  // namespace HWY_NAMESPACE
}  // namespace flynn::detail::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace flynn::detail::simd {

HWY_EXPORT(StreamAddU8);
HWY_EXPORT(StreamAddI16);
HWY_EXPORT(StreamAddF32);

namespace {
template <typename T, typename Fn>
double measure(Fn fn, double seconds) {
  // 16 KiB: comfortably inside any L1 data cache, a multiple of 8 vectors of lanes.
  const std::size_t len = 16384 / sizeof(T);
  std::vector<T> buf(len);
  for (std::size_t i = 0; i < len; ++i) buf[i] = static_cast<T>(i & 7);
  volatile double sink = 0;
  std::size_t passes = 1000;
  double best = 0.0;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const auto t0 = std::chrono::steady_clock::now();
    sink = sink + fn(buf.data(), len, passes);
    const double dt = detail::seconds_since(t0);
    if (dt > 0) best = std::max(best, static_cast<double>(len) * passes / dt);
    if (dt < 0.05) passes *= 2;
    if (detail::seconds_since(start) > seconds) break;
  }
  return best;
}
}  // namespace

double peak_add_rate(Lane lane, double seconds) {
  pin_target_from_environment();
  if (lane == Lane::Uint8ToInt16)
    return measure<std::uint8_t>(HWY_DYNAMIC_DISPATCH(StreamAddU8), seconds);
  if (lane == Lane::Int16)
    return measure<std::int16_t>(HWY_DYNAMIC_DISPATCH(StreamAddI16), seconds);
  return measure<float>(HWY_DYNAMIC_DISPATCH(StreamAddF32), seconds);
}

}  // namespace flynn::detail::simd
#endif  // HWY_ONCE
