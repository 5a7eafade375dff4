// The one-row kernel of the Permute128 layout (one_row_kernel.hpp), and the choice of
// kernel. Highway dynamic dispatch, with the AVX3_DL target (VBMI, VNNI) that Highway 1.0
// builds only on request: this file is compiled once per SIMD target.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/one_row_kernel.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include "core/one_row_kernel.hpp"

#if HWY_TARGET == HWY_AVX3_DL
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace flynn::kernels {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3_DL

bool OneRowAvailable() { return __builtin_cpu_supports("avx512vnni"); }

// The plan's batches in order: per step, the window's two blocks are loaded once, then for
// each group of 16 units its 64 slot bytes pick their values from the window (vpermi2b reads
// the low 7 bits, so the sign bit costs nothing there) and vpdpbusd adds each lane's 4 bytes
// to its int32 sum: unsigned bytes × +1, or +1 × signed bytes (negated first where the slot
// says −1). After a batch, lanes at or above the admission threshold are offered.
// The whole target string, not only the extra feature: clang lets a function's own target
// attribute replace the one HWY_BEFORE_NAMESPACE applies, and Highway's AVX3_DL string
// names avxvnni (VEX) but not avx512vnni.
template <bool kSignedValues, bool kSignedLifting>
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) void SumRow(const OneRowPlan& plan,
                                                  const std::uint8_t* HWY_RESTRICT row,
                                                  TopK<std::int32_t>& topk) {
  constexpr std::uint32_t G = Permute128::kGroups;
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i zero = _mm512_setzero_si512();
  const std::uint8_t* HWY_RESTRICT slots = plan.slots.data();
  const std::uint16_t* HWY_RESTRICT window = plan.windows.data();
  const std::uint32_t* HWY_RESTRICT steps = plan.batch_steps.data();
  const std::uint32_t* HWY_RESTRICT units = plan.units.data();
  const std::size_t batches = plan.batch_steps.size() - 1;
  std::int32_t* thr = topk.thresholds();
  __m512i t = _mm512_set1_epi32(thr[0]);
  HWY_ALIGN std::int32_t lanes[Permute128::kLanes];
  constexpr std::size_t kStepBytes = OneRowPlan::kBatchUnits * Permute128::kSlots;
  for (std::size_t b = 0; b < batches; ++b, units += OneRowPlan::kBatchUnits) {
    __m512i acc[G];
    for (std::uint32_t g = 0; g < G; ++g) acc[g] = zero;
    const std::uint16_t* HWY_RESTRICT end = plan.windows.data() + steps[b + 1];
    for (; window != end; ++window, slots += kStepBytes) {
      const std::uint8_t* w = row + *window;
      const __m512i lo = _mm512_load_si512(w);
      const __m512i hi = _mm512_load_si512(w + 64);
      for (std::uint32_t g = 0; g < G; ++g) {
        const __m512i idx = _mm512_load_si512(slots + g * 64);
        __m512i v = _mm512_permutex2var_epi8(lo, idx, hi);
        if constexpr (kSignedLifting)
          v = _mm512_mask_sub_epi8(v, _mm512_movepi8_mask(idx), zero, v);
        if constexpr (kSignedValues) {
          acc[g] = _mm512_dpbusd_epi32(acc[g], ones, v);
        } else {
          acc[g] = _mm512_dpbusd_epi32(acc[g], v, ones);
        }
      }
    }
    __mmask16 any = 0;
    for (std::uint32_t g = 0; g < G; ++g) any |= _mm512_cmpge_epi32_mask(acc[g], t);
    if (HWY_LIKELY(any == 0)) continue;
    // Thresholds rise as units enter, so each group compares with the fresh one.
    for (std::uint32_t g = 0; g < G; ++g) {
      const __mmask16 k = _mm512_cmpge_epi32_mask(acc[g], t);
      if (!k) continue;
      _mm512_store_si512(lanes, acc[g]);
      const std::uint32_t* u = units + g * Permute128::kLanes;
      for (unsigned bits = k; bits; bits &= bits - 1) {
        const unsigned l = static_cast<unsigned>(__builtin_ctz(bits));
        if (u[l] != OneRowPlan::kNoUnit) topk.offer(0, lanes[l], u[l]);
      }
      t = _mm512_set1_epi32(thr[0]);
    }
  }
}

void ProjectOneRow(const OneRowPlan& plan, const std::uint8_t* row, ByteValues values,
                   TopK<std::int32_t>& topk) {
  if (plan.signed_lifting) return SumRow<true, true>(plan, row, topk);
  if (values == ByteValues::Signed) return SumRow<true, false>(plan, row, topk);
  SumRow<false, false>(plan, row, topk);
}

#else  // targets without VBMI: never called (OneRowAvailable() is false)

bool OneRowAvailable() { return false; }
void ProjectOneRow(const OneRowPlan&, const std::uint8_t*, ByteValues, TopK<std::int32_t>&) {}

#endif

}  // namespace HWY_NAMESPACE
}  // namespace flynn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace flynn::kernels {

HWY_EXPORT(OneRowAvailable);
HWY_EXPORT(ProjectOneRow);

std::optional<OneRowLayout> one_row_layout() {
  if (HWY_DYNAMIC_DISPATCH(OneRowAvailable)()) return OneRowLayout::Permute128;
  if (detail::shuffle_kernel_available()) return OneRowLayout::Shuffle16;
  return std::nullopt;
}

const char* one_row_kernel_name(OneRowLayout layout) {
  return layout == OneRowLayout::Permute128 ? "AVX-512 VBMI byte permute (Permute128)"
                                            : "byte shuffle (Shuffle16)";
}

void project_one_row(const OneRowPlan& plan, const std::uint8_t* row, ByteValues values,
                     TopK<std::int32_t>& topk) {
  if (plan.layout == OneRowLayout::Shuffle16) return detail::project_shuffle(plan, row, values, topk);
  HWY_DYNAMIC_DISPATCH(ProjectOneRow)(plan, row, values, topk);
}

}  // namespace flynn::kernels
#endif  // HWY_ONCE
