// Loads of one vector of lanes from a kernel's storage type, shared by the Highway kernels
// (flyhash_kernels.cpp, harness/add_rate_kernel.cpp): a plain load when storage and lanes agree,
// or bytes widened to the lanes (pixels 0..255 zero-extended, −127..127 sign-extended),
// which halves the bytes loaded per addition. Included after hwy/highway.h, once per SIMD
// target, like Highway's own -inl.h headers (hence the toggled guard).
#if defined(FLYNN_CORE_SIMD_LOAD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef FLYNN_CORE_SIMD_LOAD_INL_H_
#undef FLYNN_CORE_SIMD_LOAD_INL_H_
#else
#define FLYNN_CORE_SIMD_LOAD_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace flynn::kernels {
namespace HWY_NAMESPACE {

/// Lanes(d) elements at p as d's lanes (unaligned).
template <class D>
HWY_INLINE hwy::HWY_NAMESPACE::VFromD<D> LoadWidened(
    D d, const hwy::HWY_NAMESPACE::TFromD<D>* HWY_RESTRICT p) {
  return hwy::HWY_NAMESPACE::LoadU(d, p);
}
/// Lanes(d) bytes at p, zero-extended to d's (16-bit or wider) lanes.
template <class D>
HWY_INLINE hwy::HWY_NAMESPACE::VFromD<D> LoadWidened(D d, const std::uint8_t* HWY_RESTRICT p) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<std::uint8_t, D> d8;
  return hn::BitCast(d, hn::PromoteTo(hn::RebindToUnsigned<D>(), hn::LoadU(d8, p)));
}
/// Lanes(d) signed bytes at p, sign-extended to d's (signed, 16-bit or wider) lanes.
template <class D>
HWY_INLINE hwy::HWY_NAMESPACE::VFromD<D> LoadWidened(D d, const std::int8_t* HWY_RESTRICT p) {
  namespace hn = hwy::HWY_NAMESPACE;
  const hn::Rebind<std::int8_t, D> d8;
  return hn::PromoteTo(d, hn::LoadU(d8, p));
}

}  // namespace HWY_NAMESPACE
}  // namespace flynn::kernels
HWY_AFTER_NAMESPACE();

#endif  // FLYNN_CORE_SIMD_LOAD_INL_H_
