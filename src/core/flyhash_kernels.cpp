// Highway dynamic dispatch: this file is compiled once per SIMD target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/flyhash_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "core/flyhash_kernels.hpp"
#include "flynn/simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace flynn::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename T>
std::size_t BlockRows() {
  const hn::ScalableTag<T> d;
  return 4 * hn::Lanes(d);
}

// Four accumulators of N lanes each cover the B = 4N rows of a block. The sums are plain
// lane-wise additions in the order of the unit's (ascending) columns, identical on every
// target, so the winners do not depend on the CPU.
template <typename T, typename Index>
void ProjectWta(const T* HWY_RESTRICT xt, const Index* HWY_RESTRICT cols,
                std::uint32_t s, std::uint32_t unit_begin, std::uint32_t unit_end,
                TopK<T>& topk) {
  const hn::ScalableTag<T> d;
  const std::size_t N = hn::Lanes(d);
  const std::size_t B = 4 * N;
  T* thr = topk.thresholds();
  auto t0 = hn::LoadU(d, thr), t1 = hn::LoadU(d, thr + N), t2 = hn::LoadU(d, thr + 2 * N),
       t3 = hn::LoadU(d, thr + 3 * N);
  HWY_ALIGN T lanes[4 * HWY_MAX_BYTES / sizeof(T)];
  for (std::uint32_t unit = unit_begin; unit < unit_end; ++unit) {
    const Index* c = cols + std::size_t(unit) * s;
    // Starting from the first column (s ≥ 1) rather than from zero keeps the accumulators
    // in place across iterations (no register copies in the loop); 0 + x = x, and a −0
    // start compares equal to +0, so the winners are unchanged.
    const T* p = xt + std::size_t(c[0]) * B;
    auto a0 = hn::LoadU(d, p), a1 = hn::LoadU(d, p + N), a2 = hn::LoadU(d, p + 2 * N),
         a3 = hn::LoadU(d, p + 3 * N);
    for (std::uint32_t k = 1; k < s; ++k) {
      p = xt + std::size_t(c[k]) * B;
      a0 = hn::Add(a0, hn::LoadU(d, p));
      a1 = hn::Add(a1, hn::LoadU(d, p + N));
      a2 = hn::Add(a2, hn::LoadU(d, p + 2 * N));
      a3 = hn::Add(a3, hn::LoadU(d, p + 3 * N));
    }
    const auto below = hn::And(hn::And(hn::Lt(a0, t0), hn::Lt(a1, t1)),
                               hn::And(hn::Lt(a2, t2), hn::Lt(a3, t3)));
    if (HWY_LIKELY(hn::AllTrue(d, below))) continue;
    hn::Store(a0, d, lanes);
    hn::Store(a1, d, lanes + N);
    hn::Store(a2, d, lanes + 2 * N);
    hn::Store(a3, d, lanes + 3 * N);
    for (std::size_t b = 0; b < B; ++b) {
      if (!(lanes[b] < thr[b])) topk.offer(b, lanes[b], unit);
    }
    t0 = hn::LoadU(d, thr);
    t1 = hn::LoadU(d, thr + N);
    t2 = hn::LoadU(d, thr + 2 * N);
    t3 = hn::LoadU(d, thr + 3 * N);
  }
}

std::int64_t TargetId() { return HWY_TARGET; }

std::size_t BlockRowsF32() { return BlockRows<float>(); }
std::size_t BlockRowsI16() { return BlockRows<std::int16_t>(); }
std::size_t BlockRowsI32() { return BlockRows<std::int32_t>(); }

#define FLYNN_PROJECT_WTA(NAME, T, INDEX)                                                   \
  void NAME(const T* xt, const INDEX* cols, std::uint32_t s, std::uint32_t ub,             \
            std::uint32_t ue, TopK<T>& topk) {                                             \
    ProjectWta<T, INDEX>(xt, cols, s, ub, ue, topk);                                       \
  }
FLYNN_PROJECT_WTA(ProjectWtaF32U16, float, std::uint16_t)
FLYNN_PROJECT_WTA(ProjectWtaF32U32, float, std::uint32_t)
FLYNN_PROJECT_WTA(ProjectWtaI16U16, std::int16_t, std::uint16_t)
FLYNN_PROJECT_WTA(ProjectWtaI16U32, std::int16_t, std::uint32_t)
FLYNN_PROJECT_WTA(ProjectWtaI32U16, std::int32_t, std::uint16_t)
FLYNN_PROJECT_WTA(ProjectWtaI32U32, std::int32_t, std::uint32_t)
#undef FLYNN_PROJECT_WTA

}  // namespace HWY_NAMESPACE
}  // namespace flynn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace flynn::kernels {

HWY_EXPORT(TargetId);
HWY_EXPORT(BlockRowsF32);
HWY_EXPORT(BlockRowsI16);
HWY_EXPORT(BlockRowsI32);
HWY_EXPORT(ProjectWtaF32U16);
HWY_EXPORT(ProjectWtaF32U32);
HWY_EXPORT(ProjectWtaI16U16);
HWY_EXPORT(ProjectWtaI16U32);
HWY_EXPORT(ProjectWtaI32U16);
HWY_EXPORT(ProjectWtaI32U32);

std::size_t block_rows_f32() { return HWY_DYNAMIC_DISPATCH(BlockRowsF32)(); }
std::size_t block_rows_i16() { return HWY_DYNAMIC_DISPATCH(BlockRowsI16)(); }
std::size_t block_rows_i32() { return HWY_DYNAMIC_DISPATCH(BlockRowsI32)(); }

void project_wta(const float* xt, const Columns& c, std::uint32_t ub, std::uint32_t ue,
                 TopK<float>& topk) {
  if (c.narrow) return HWY_DYNAMIC_DISPATCH(ProjectWtaF32U16)(xt, c.narrow, c.s, ub, ue, topk);
  HWY_DYNAMIC_DISPATCH(ProjectWtaF32U32)(xt, c.wide, c.s, ub, ue, topk);
}
void project_wta(const std::int16_t* xt, const Columns& c, std::uint32_t ub, std::uint32_t ue,
                 TopK<std::int16_t>& topk) {
  if (c.narrow) return HWY_DYNAMIC_DISPATCH(ProjectWtaI16U16)(xt, c.narrow, c.s, ub, ue, topk);
  HWY_DYNAMIC_DISPATCH(ProjectWtaI16U32)(xt, c.wide, c.s, ub, ue, topk);
}
void project_wta(const std::int32_t* xt, const Columns& c, std::uint32_t ub, std::uint32_t ue,
                 TopK<std::int32_t>& topk) {
  if (c.narrow) return HWY_DYNAMIC_DISPATCH(ProjectWtaI32U16)(xt, c.narrow, c.s, ub, ue, topk);
  HWY_DYNAMIC_DISPATCH(ProjectWtaI32U32)(xt, c.wide, c.s, ub, ue, topk);
}

const char* simd_target_name() {
  return hwy::TargetName(HWY_DYNAMIC_DISPATCH(TargetId)());
}

}  // namespace flynn::kernels

namespace flynn::simd {
std::string target_name() { return kernels::simd_target_name(); }
}  // namespace flynn::simd
#endif  // HWY_ONCE
