// Highway dynamic dispatch: this file is compiled once per SIMD target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/flyhash_kernels.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>

#include "core/flyhash_kernels.hpp"
#include "core/simd_load-inl.h"

HWY_BEFORE_NAMESPACE();
namespace flynn::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Offers the lanes of activation vector `a` (unit `unit`) at or above their row's
// threshold `t` (few, once the buffers fill): their positions come from the comparison
// mask's bits.
template <class D>
HWY_INLINE void OfferLanes(D d, hn::VFromD<D> a, hn::VFromD<D> t, std::uint32_t unit,
                           TopK<hn::TFromD<D>>& topk) {
  using T = hn::TFromD<D>;
  const auto enters = hn::Not(hn::Lt(a, t));
  // Of a group of four units with some lane to offer, most of the units have none.
  if (hn::AllFalse(d, enters)) return;
  const std::size_t B = hn::Lanes(d);
  HWY_ALIGN T lanes[HWY_MAX_BYTES / sizeof(T)];
  std::uint8_t bits[(HWY_MAX_BYTES / sizeof(T) + 7) / 8 + 8] = {};
  const std::size_t nbytes = hn::StoreMaskBits(d, enters, bits);
  hn::Store(a, d, lanes);
  for (std::size_t byte = 0; byte < nbytes; ++byte) {
    for (unsigned m = bits[byte]; m; m &= m - 1) {
      const std::size_t r = byte * 8 + static_cast<std::size_t>(__builtin_ctz(m));
      if (r < B) topk.offer(r, lanes[r], unit);
    }
  }
}

// Four units' activations: the lanes that reach their rows' thresholds, offered unit by
// unit. Thresholds rise as units enter, so each later unit compares with fresh ones
// (`t` is reloaded from `thr`).
template <class D, class V = hn::VFromD<D>>
HWY_INLINE void OfferFour(D d, V a0, V a1, V a2, V a3, V& t, const hn::TFromD<D>* thr,
                          const std::uint32_t (&unit)[4], TopK<hn::TFromD<D>>& topk) {
  const auto below =
      hn::And(hn::And(hn::Lt(a0, t), hn::Lt(a1, t)), hn::And(hn::Lt(a2, t), hn::Lt(a3, t)));
  if (HWY_LIKELY(hn::AllTrue(d, below))) return;
  OfferLanes(d, a0, t, unit[0], topk);
  t = hn::LoadU(d, thr);
  OfferLanes(d, a1, t, unit[1], topk);
  t = hn::LoadU(d, thr);
  OfferLanes(d, a2, t, unit[2], topk);
  t = hn::LoadU(d, thr);
  OfferLanes(d, a3, t, unit[3], topk);
  t = hn::LoadU(d, thr);
}

// Four units at a time, one vector (= the block's rows) each. The sums are lane-wise
// additions in the order of each unit's ascending columns, starting from the first
// column's value (0 + x = x, and a −0 start compares equal to +0), identical on every
// target, so the winners depend neither on the CPU nor on the block width.
template <class D, typename E, typename Index>
void ProjectWta(D d, const E* HWY_RESTRICT xt, const Index* HWY_RESTRICT cols, std::uint32_t s,
                std::uint32_t unit_begin, std::uint32_t unit_end, TopK<hn::TFromD<D>>& topk) {
  const std::size_t B = hn::Lanes(d);
  const auto* thr = topk.thresholds();
  auto t = hn::LoadU(d, thr);
  std::uint32_t unit = unit_begin;
  for (; unit + 4 <= unit_end; unit += 4) {
    const Index* c0 = cols + std::size_t(unit) * s;
    const Index* c1 = c0 + s;
    const Index* c2 = c1 + s;
    const Index* c3 = c2 + s;
    auto a0 = LoadWidened(d, xt + std::size_t(c0[0]) * B);
    auto a1 = LoadWidened(d, xt + std::size_t(c1[0]) * B);
    auto a2 = LoadWidened(d, xt + std::size_t(c2[0]) * B);
    auto a3 = LoadWidened(d, xt + std::size_t(c3[0]) * B);
    for (std::uint32_t k = 1; k < s; ++k) {
      a0 = hn::Add(a0, LoadWidened(d, xt + std::size_t(c0[k]) * B));
      a1 = hn::Add(a1, LoadWidened(d, xt + std::size_t(c1[k]) * B));
      a2 = hn::Add(a2, LoadWidened(d, xt + std::size_t(c2[k]) * B));
      a3 = hn::Add(a3, LoadWidened(d, xt + std::size_t(c3[k]) * B));
    }
    OfferFour(d, a0, a1, a2, a3, t, thr, {unit, unit + 1, unit + 2, unit + 3}, topk);
  }
  for (; unit < unit_end; ++unit) {
    const Index* c = cols + std::size_t(unit) * s;
    auto a = LoadWidened(d, xt + std::size_t(c[0]) * B);
    for (std::uint32_t k = 1; k < s; ++k) a = hn::Add(a, LoadWidened(d, xt + std::size_t(c[k]) * B));
    OfferLanes(d, a, t, unit, topk);
    t = hn::LoadU(d, thr);
  }
}

// The signed layout (Columns::units): positions [begin, end), each the sum of its first
// p columns of the unmirrored block minus the sum of the others. Integer lanes only, so
// the sums equal the mirrored kernel's whatever their order. Positions are sorted by p,
// so four consecutive ones share it except where p changes; those are summed one by one.
template <class D, typename E>
void ProjectWtaSigned(D d, const E* HWY_RESTRICT xt, const std::uint16_t* HWY_RESTRICT cols,
                      const std::uint32_t* HWY_RESTRICT units,
                      const std::uint16_t* HWY_RESTRICT positives, std::uint32_t s,
                      std::uint32_t begin, std::uint32_t end, TopK<hn::TFromD<D>>& topk) {
  static_assert(!hwy::IsFloat<hn::TFromD<D>>(), "float sums depend on their order");
  const std::size_t B = hn::Lanes(d);
  const auto* thr = topk.thresholds();
  auto t = hn::LoadU(d, thr);
  // First column: positive when p > 0, else negated; later columns add while k < p.
  auto first = [&](const std::uint16_t* c, std::uint32_t p) {
    const auto x = LoadWidened(d, xt + std::size_t(c[0]) * B);
    return p > 0 ? x : hn::Neg(x);
  };
  auto sum_one = [&](std::uint32_t pos) {
    const std::uint16_t* c = cols + std::size_t(pos) * s;
    const std::uint32_t p = positives[pos];
    auto a = first(c, p);
    std::uint32_t k = 1;
    for (; k < p; ++k) a = hn::Add(a, LoadWidened(d, xt + std::size_t(c[k]) * B));
    for (; k < s; ++k) a = hn::Sub(a, LoadWidened(d, xt + std::size_t(c[k]) * B));
    return a;
  };
  std::uint32_t pos = begin;
  for (; pos + 4 <= end; pos += 4) {
    const std::uint32_t p = positives[pos];
    if (HWY_UNLIKELY(positives[pos + 3] != p)) {
      for (std::uint32_t i = 0; i < 4; ++i) {
        OfferLanes(d, sum_one(pos + i), t, units[pos + i], topk);
        t = hn::LoadU(d, thr);
      }
      continue;
    }
    const std::uint16_t* c0 = cols + std::size_t(pos) * s;
    const std::uint16_t* c1 = c0 + s;
    const std::uint16_t* c2 = c1 + s;
    const std::uint16_t* c3 = c2 + s;
    auto a0 = first(c0, p);
    auto a1 = first(c1, p);
    auto a2 = first(c2, p);
    auto a3 = first(c3, p);
    std::uint32_t k = 1;
    for (; k < p; ++k) {
      a0 = hn::Add(a0, LoadWidened(d, xt + std::size_t(c0[k]) * B));
      a1 = hn::Add(a1, LoadWidened(d, xt + std::size_t(c1[k]) * B));
      a2 = hn::Add(a2, LoadWidened(d, xt + std::size_t(c2[k]) * B));
      a3 = hn::Add(a3, LoadWidened(d, xt + std::size_t(c3[k]) * B));
    }
    for (; k < s; ++k) {
      a0 = hn::Sub(a0, LoadWidened(d, xt + std::size_t(c0[k]) * B));
      a1 = hn::Sub(a1, LoadWidened(d, xt + std::size_t(c1[k]) * B));
      a2 = hn::Sub(a2, LoadWidened(d, xt + std::size_t(c2[k]) * B));
      a3 = hn::Sub(a3, LoadWidened(d, xt + std::size_t(c3[k]) * B));
    }
    OfferFour(d, a0, a1, a2, a3, t, thr, {units[pos], units[pos + 1], units[pos + 2], units[pos + 3]},
              topk);
  }
  for (; pos < end; ++pos) {
    OfferLanes(d, sum_one(pos), t, units[pos], topk);
    t = hn::LoadU(d, thr);
  }
}

template <typename T>
using FullTag = hn::ScalableTag<T>;
// Half the lanes of FullTag. On scalable targets (SVE) HWY_LANES is the largest vector the
// architecture allows, not this CPU's, so the half is asked of the dispatch instead.
#if HWY_HAVE_SCALABLE
template <typename T>
using HalfTag = hn::ScalableTag<T, -1>;
#else
template <typename T>
using HalfTag = hn::CappedTag<T, std::max<std::size_t>(1, HWY_LANES(T) / 2)>;
#endif

std::int64_t TargetId() { return HWY_TARGET; }
std::size_t LanesI16() { return hn::Lanes(FullTag<std::int16_t>()); }
std::size_t LanesI32() { return hn::Lanes(FullTag<std::int32_t>()); }
std::size_t LanesF32() { return hn::Lanes(FullTag<float>()); }
std::size_t HalfLanesI16() { return hn::Lanes(HalfTag<std::int16_t>()); }
std::size_t HalfLanesI32() { return hn::Lanes(HalfTag<std::int32_t>()); }
std::size_t HalfLanesF32() { return hn::Lanes(HalfTag<float>()); }

// Entry points: element type E, accumulator type T, index type, full or half width.
#define FLYNN_PROJECT_WTA(NAME, E, T, INDEX)                                                  \
  void NAME(const E* xt, const INDEX* cols, std::uint32_t s, bool half, std::uint32_t ub,    \
            std::uint32_t ue, TopK<T>& topk) {                                               \
    if (half) return ProjectWta(HalfTag<T>(), xt, cols, s, ub, ue, topk);                    \
    ProjectWta(FullTag<T>(), xt, cols, s, ub, ue, topk);                                     \
  }
FLYNN_PROJECT_WTA(ProjectU8U16, std::uint8_t, std::int16_t, std::uint16_t)
FLYNN_PROJECT_WTA(ProjectU8U32, std::uint8_t, std::int16_t, std::uint32_t)
FLYNN_PROJECT_WTA(ProjectS8U16, std::int8_t, std::int16_t, std::uint16_t)
FLYNN_PROJECT_WTA(ProjectS8U32, std::int8_t, std::int16_t, std::uint32_t)
FLYNN_PROJECT_WTA(ProjectI16U16, std::int16_t, std::int16_t, std::uint16_t)
FLYNN_PROJECT_WTA(ProjectI16U32, std::int16_t, std::int16_t, std::uint32_t)
FLYNN_PROJECT_WTA(ProjectI32U16, std::int32_t, std::int32_t, std::uint16_t)
FLYNN_PROJECT_WTA(ProjectI32U32, std::int32_t, std::int32_t, std::uint32_t)
FLYNN_PROJECT_WTA(ProjectF32U16, float, float, std::uint16_t)
FLYNN_PROJECT_WTA(ProjectF32U32, float, float, std::uint32_t)
#undef FLYNN_PROJECT_WTA

#define FLYNN_PROJECT_WTA_SIGNED(NAME, E)                                                       \
  void NAME(const E* xt, const std::uint16_t* cols, const std::uint32_t* units,                 \
            const std::uint16_t* positives, std::uint32_t s, bool half, std::uint32_t begin,     \
            std::uint32_t end, TopK<std::int16_t>& topk) {                                      \
    if (half)                                                                                   \
      return ProjectWtaSigned(HalfTag<std::int16_t>(), xt, cols, units, positives, s, begin,    \
                              end, topk);                                                       \
    ProjectWtaSigned(FullTag<std::int16_t>(), xt, cols, units, positives, s, begin, end, topk); \
  }
FLYNN_PROJECT_WTA_SIGNED(ProjectSignedS8, std::int8_t)
FLYNN_PROJECT_WTA_SIGNED(ProjectSignedI16, std::int16_t)
#undef FLYNN_PROJECT_WTA_SIGNED

}  // namespace HWY_NAMESPACE
}  // namespace flynn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace flynn::kernels {

HWY_EXPORT(TargetId);
HWY_EXPORT(LanesI16);
HWY_EXPORT(LanesI32);
HWY_EXPORT(LanesF32);
HWY_EXPORT(HalfLanesI16);
HWY_EXPORT(HalfLanesI32);
HWY_EXPORT(HalfLanesF32);
HWY_EXPORT(ProjectU8U16);
HWY_EXPORT(ProjectU8U32);
HWY_EXPORT(ProjectS8U16);
HWY_EXPORT(ProjectS8U32);
HWY_EXPORT(ProjectI16U16);
HWY_EXPORT(ProjectI16U32);
HWY_EXPORT(ProjectI32U16);
HWY_EXPORT(ProjectI32U32);
HWY_EXPORT(ProjectF32U16);
HWY_EXPORT(ProjectF32U32);
HWY_EXPORT(ProjectSignedS8);
HWY_EXPORT(ProjectSignedI16);

namespace {
// A block larger than this falls out of a 32–48 KiB L1 data cache together with the
// lifting-matrix columns streaming past it.
constexpr std::size_t kL1BlockBytes = 32 * 1024;
// Signed blocks may be twice as large. They were measured as the mirrored rows [e, −e] of
// the signed variants (zsign-q on Fashion-MNIST: 1568 columns, 50 KiB of int8 at full
// width), where halving their lanes cost more than the cache misses: with int16 storage,
// full width took 22% less CPU time to train the default model on Fashion-MNIST (17.6 s vs
// 22.6 s, one thread); with int8 storage, a row of a 512-row batch of that model hashed in
// 166 µs at full width against 188 µs at half width (medians, one thread, same winners).
// Those rows now skip the mirror (signed_columns.hpp: 784 columns, 25 KiB).
constexpr std::size_t kL1BlockBytesSigned = 64 * 1024;
}  // namespace

BlockShape block_shape(Lane lane, std::uint32_t columns) {
  std::size_t full = 0, half = 0, bytes = 0;
  switch (lane) {
    case Lane::U8:
    case Lane::S8:
      full = HWY_DYNAMIC_DISPATCH(LanesI16)();
      half = HWY_DYNAMIC_DISPATCH(HalfLanesI16)();
      bytes = 1;
      break;
    case Lane::I16:
      full = HWY_DYNAMIC_DISPATCH(LanesI16)();
      half = HWY_DYNAMIC_DISPATCH(HalfLanesI16)();
      bytes = 2;
      break;
    case Lane::I32:
      full = HWY_DYNAMIC_DISPATCH(LanesI32)();
      half = HWY_DYNAMIC_DISPATCH(HalfLanesI32)();
      bytes = 4;
      break;
    case Lane::F32:
      full = HWY_DYNAMIC_DISPATCH(LanesF32)();
      half = HWY_DYNAMIC_DISPATCH(HalfLanesF32)();
      bytes = 4;
      break;
  }
  BlockShape shape;
  const std::size_t limit =
      lane == Lane::I16 || lane == Lane::S8 ? kL1BlockBytesSigned : kL1BlockBytes;
  shape.half = half < full && std::size_t(columns) * full * bytes > limit;
  shape.rows = shape.half ? half : full;
  return shape;
}

#define FLYNN_DISPATCH(E, T, U16, U32)                                                        \
  void project_wta(const E* xt, const Columns& c, BlockShape shape, std::uint32_t ub,        \
                   std::uint32_t ue, TopK<T>& topk) {                                        \
    if (c.narrow) return HWY_DYNAMIC_DISPATCH(U16)(xt, c.narrow, c.s, shape.half, ub, ue, topk); \
    HWY_DYNAMIC_DISPATCH(U32)(xt, c.wide, c.s, shape.half, ub, ue, topk);                    \
  }
#define FLYNN_DISPATCH_SIGNED(E, T, U16, U32, SIGNED)                                          \
  void project_wta(const E* xt, const Columns& c, BlockShape shape, std::uint32_t ub,        \
                   std::uint32_t ue, TopK<T>& topk) {                                        \
    if (c.units)                                                                             \
      return HWY_DYNAMIC_DISPATCH(SIGNED)(xt, c.narrow, c.units, c.positives, c.s, shape.half, \
                                          ub, ue, topk);                                     \
    if (c.narrow) return HWY_DYNAMIC_DISPATCH(U16)(xt, c.narrow, c.s, shape.half, ub, ue, topk); \
    HWY_DYNAMIC_DISPATCH(U32)(xt, c.wide, c.s, shape.half, ub, ue, topk);                    \
  }
FLYNN_DISPATCH(std::uint8_t, std::int16_t, ProjectU8U16, ProjectU8U32)
FLYNN_DISPATCH_SIGNED(std::int8_t, std::int16_t, ProjectS8U16, ProjectS8U32, ProjectSignedS8)
FLYNN_DISPATCH_SIGNED(std::int16_t, std::int16_t, ProjectI16U16, ProjectI16U32, ProjectSignedI16)
FLYNN_DISPATCH(std::int32_t, std::int32_t, ProjectI32U16, ProjectI32U32)
FLYNN_DISPATCH(float, float, ProjectF32U16, ProjectF32U32)
#undef FLYNN_DISPATCH_SIGNED
#undef FLYNN_DISPATCH

const char* simd_target_name() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(TargetId)()); }

}  // namespace flynn::kernels
#endif  // HWY_ONCE
