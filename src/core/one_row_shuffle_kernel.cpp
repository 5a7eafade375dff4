// The one-row kernel of the Shuffle16 layout (one_row_plan.hpp), for every SIMD target but
// AVX-512 VBMI's: Highway dynamic dispatch, this file is compiled once per target.
#ifndef HWY_WANT_AVX3_DL
#define HWY_WANT_AVX3_DL
#endif
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/one_row_shuffle_kernel.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/one_row_kernel.hpp"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace flynn::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR  // one-lane vectors hold no 16-byte table: block kernels there

// Vectors of at most one step's 64 slots: 1 (AVX-512), 2 (AVX2) or 4 (SSE, NEON) of them
// per step. Scalable vectors (SVE) are capped at 16 bytes, as NEON's.
#if HWY_HAVE_SCALABLE
constexpr std::size_t kVectorBytes = 16;
#else
constexpr std::size_t kVectorBytes = HWY_MIN(64, HWY_MAX_BYTES);
#endif
using D8 = hn::CappedTag<std::uint8_t, kVectorBytes>;
using D16 = hn::Repartition<std::int16_t, D8>;
using V8 = hn::VFromD<D8>;
using V16 = hn::VFromD<D16>;
constexpr std::size_t kSlotBytes = OneRowPlan::kBatchUnits * Shuffle16::kSlots;  // 64 a step
constexpr std::size_t kGroups = kSlotBytes / kVectorBytes;                      // vectors a step
constexpr std::size_t kGroupUnits = kVectorBytes / Shuffle16::kSlots;

// How a unit's two slot bytes add up: unsigned bytes, signed bytes, or (signed lifting)
// the first minus the second, both held + 128.
enum class Pair { Unsigned, Signed, Difference };

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
// pmaddubsw (unsigned bytes × signed bytes, pairs summed into 16 bits) with ±1 weights.
template <Pair kPair>
HWY_INLINE __m128i PairSumsX86(__m128i v) {
  const __m128i ones = _mm_set1_epi8(1);
  if constexpr (kPair == Pair::Signed) return _mm_maddubs_epi16(ones, v);
  if constexpr (kPair == Pair::Difference) return _mm_maddubs_epi16(v, _mm_set1_epi16(-255));
  return _mm_maddubs_epi16(v, ones);
}
#if HWY_TARGET <= HWY_AVX2
template <Pair kPair>
HWY_INLINE __m256i PairSumsX86(__m256i v) {
  const __m256i ones = _mm256_set1_epi8(1);
  if constexpr (kPair == Pair::Signed) return _mm256_maddubs_epi16(ones, v);
  if constexpr (kPair == Pair::Difference) return _mm256_maddubs_epi16(v, _mm256_set1_epi16(-255));
  return _mm256_maddubs_epi16(v, ones);
}
#endif
#if HWY_TARGET <= HWY_AVX3
template <Pair kPair>
HWY_INLINE __m512i PairSumsX86(__m512i v) {
  const __m512i ones = _mm512_set1_epi8(1);
  if constexpr (kPair == Pair::Signed) return _mm512_maddubs_epi16(ones, v);
  if constexpr (kPair == Pair::Difference) return _mm512_maddubs_epi16(v, _mm512_set1_epi16(-255));
  return _mm512_maddubs_epi16(v, ones);
}
#endif
#endif

// Each 16-bit lane from its two bytes (low: a unit's first slot), as kPair says; exact (at
// most 510 in magnitude). Highway 1.0 has no such operation: x86's pmaddubsw with ±1
// weights (−255 is the byte pair (+1, −1)) does it in one instruction, NEON's vpaddl the
// sums too; elsewhere shifts and an add.
template <Pair kPair>
HWY_INLINE V16 PairSums(V8 v) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSSE3
  return V16{PairSumsX86<kPair>(v.raw)};
#else
#if HWY_TARGET == HWY_NEON
  if constexpr (kPair == Pair::Unsigned) return V16{vreinterpretq_s16_u16(vpaddlq_u8(v.raw))};
  if constexpr (kPair == Pair::Signed) return V16{vpaddlq_s8(vreinterpretq_s8_u8(v.raw))};
#endif
  const D16 d16;
  const hn::RebindToUnsigned<D16> du;
  const auto u = hn::BitCast(du, v);
  const auto first = hn::And(u, hn::Set(du, 0xFF)), second = hn::ShiftRight<8>(u);
  if constexpr (kPair == Pair::Unsigned) return hn::BitCast(d16, hn::Add(first, second));
  if constexpr (kPair == Pair::Difference) return hn::BitCast(d16, hn::Sub(first, second));
  const V16 w = hn::BitCast(d16, v);  // signed bytes: sign-extend each
  return hn::Add(hn::ShiftRight<8>(hn::ShiftLeft<8>(w)), hn::ShiftRight<8>(w));
#endif
}

// Slot bytes [g·kVectorBytes, (g + 1)·kVectorBytes) of a step, from its 32 packed bytes
// (one_row_plan.hpp: byte j holds slot j low, slot 32 + j high).
template <std::size_t g>
HWY_INLINE V8 DecodeGroup(const std::uint8_t* HWY_RESTRICT packed) {
  if constexpr (kVectorBytes == 2 * Shuffle16::kStepBytes) {  // 64: both halves, combined
    const hn::Half<D8> dh;
    const hn::RebindToUnsigned<hn::Repartition<std::uint16_t, decltype(dh)>> dw;
    const auto q = hn::Load(dh, packed);
    const auto low = hn::And(q, hn::Set(dh, 0x0F));
    const auto high = hn::And(hn::BitCast(dh, hn::ShiftRight<4>(hn::BitCast(dw, q))), hn::Set(dh, 0x0F));
    return hn::Combine(D8(), high, low);
  } else {
    constexpr std::size_t chunks = Shuffle16::kStepBytes / kVectorBytes;
    const D8 d8;
    const hn::Repartition<std::uint16_t, D8> dw;
    const V8 q = hn::Load(d8, packed + (g % chunks) * kVectorBytes);
    if constexpr (g < chunks) return hn::And(q, hn::Set(d8, 0x0F));
    return hn::And(hn::BitCast(d8, hn::ShiftRight<4>(hn::BitCast(dw, q))), hn::Set(d8, 0x0F));
  }
}

// The window: 16 bytes from p, in every 16-byte block of the vector.
HWY_INLINE V8 LoadWindow(const std::uint8_t* HWY_RESTRICT p) {
  if constexpr (kVectorBytes == 16) {
    return hn::LoadU(D8(), p);
  } else {
    return hn::LoadDup128(D8(), p);
  }
}

// Group g of a step: its slots looked up in the window, summed in pairs into `acc`.
template <Pair kPair, std::size_t g>
HWY_INLINE void AddGroup(V8 table, const std::uint8_t* HWY_RESTRICT packed, V16& acc) {
  acc = hn::Add(acc, PairSums<kPair>(hn::TableLookupBytes(table, DecodeGroup<g>(packed))));
}

// Offers the lanes of `acc` (one group's units: their sums) that reach row 0's threshold.
// 16-bit sums: a threshold above 32767 admits none, one below −32768 all.
HWY_INLINE void OfferGroup(V16 acc, const std::uint32_t* HWY_RESTRICT units,
                           TopK<std::int32_t>& topk) {
  const D16 d16;
  const std::int32_t t = topk.thresholds()[0];
  if (t > std::numeric_limits<std::int16_t>::max()) return;
  const auto t16 = static_cast<std::int16_t>(std::max<std::int32_t>(t, -32768));
  const auto enters = hn::Not(hn::Lt(acc, hn::Set(d16, t16)));
  if (HWY_LIKELY(hn::AllFalse(d16, enters))) return;
  HWY_ALIGN std::int16_t lanes[kGroupUnits];
  std::uint8_t bits[kGroupUnits / 8 + 8] = {};
  const std::size_t nbytes = hn::StoreMaskBits(d16, enters, bits);
  hn::Store(acc, d16, lanes);
  for (std::size_t byte = 0; byte < nbytes; ++byte) {
    for (unsigned m = bits[byte]; m; m &= m - 1) {
      const std::size_t l = byte * 8 + static_cast<std::size_t>(__builtin_ctz(m));
      if (l < kGroupUnits && units[l] != OneRowPlan::kNoUnit) topk.offer(0, lanes[l], units[l]);
    }
  }
}

// Sums `steps` steps of a batch from `packed` into one 16-bit lane per unit (kGroups
// vectors), then hands each group to `done(g, acc)`. Scalable vectors cannot be held in an
// array, so there the groups take turns over the steps (each reloading the windows).
template <Pair kPair, class Done>
HWY_INLINE void SumSteps(const std::uint8_t* HWY_RESTRICT row,
                         const std::uint16_t* HWY_RESTRICT window, std::size_t steps,
                         const std::uint8_t* HWY_RESTRICT packed, Done done) {
  constexpr std::size_t P = Shuffle16::kStepBytes;
  const D16 d16;
#if HWY_HAVE_SCALABLE
  static_assert(kGroups == 4, "16-byte vectors");
  V16 acc = hn::Zero(d16);
  for (std::size_t k = 0; k < steps; ++k) AddGroup<kPair, 0>(LoadWindow(row + window[k]), packed + k * P, acc);
  done(0, acc);
  acc = hn::Zero(d16);
  for (std::size_t k = 0; k < steps; ++k) AddGroup<kPair, 1>(LoadWindow(row + window[k]), packed + k * P, acc);
  done(1, acc);
  acc = hn::Zero(d16);
  for (std::size_t k = 0; k < steps; ++k) AddGroup<kPair, 2>(LoadWindow(row + window[k]), packed + k * P, acc);
  done(2, acc);
  acc = hn::Zero(d16);
  for (std::size_t k = 0; k < steps; ++k) AddGroup<kPair, 3>(LoadWindow(row + window[k]), packed + k * P, acc);
  done(3, acc);
#else
  V16 a0 = hn::Zero(d16), a1 = a0, a2 = a0, a3 = a0;
  auto step = [&](std::size_t k) {
    const V8 table = LoadWindow(row + window[k]);
    const std::uint8_t* p = packed + k * P;
    AddGroup<kPair, 0>(table, p, a0);
    if constexpr (kGroups > 1) AddGroup<kPair, 1>(table, p, a1);
    if constexpr (kGroups > 2) {
      AddGroup<kPair, 2>(table, p, a2);
      AddGroup<kPair, 3>(table, p, a3);
    }
  };
  // Two steps an iteration: the loop's own instructions are a sixth of a step's.
  std::size_t k = 0;
  for (; k + 2 <= steps; k += 2) {
    step(k);
    step(k + 1);
  }
  if (k < steps) step(k);
  done(0, a0);
  if constexpr (kGroups > 1) done(1, a1);
  if constexpr (kGroups > 2) {
    done(2, a2);
    done(3, a3);
  }
#endif
}

// The plan's batches in order, each unit's sum in a 16-bit lane (exact: the caller checks
// that s·max|x| ≤ 32767); after a batch, lanes at or above the admission threshold are
// offered.
template <Pair kPair>
void SumRow(const OneRowPlan& plan, const std::uint8_t* HWY_RESTRICT row,
            TopK<std::int32_t>& topk) {
  const std::uint32_t* HWY_RESTRICT steps = plan.batch_steps.data();
  const std::size_t batches = plan.batch_steps.size() - 1;
  for (std::size_t b = 0; b < batches; ++b) {
    const std::uint32_t* units = plan.units.data() + b * OneRowPlan::kBatchUnits;
    SumSteps<kPair>(row, plan.windows.data() + steps[b], steps[b + 1] - steps[b],
                    plan.slots.data() + std::size_t(steps[b]) * Shuffle16::kStepBytes,
                    [&](std::size_t g, V16 acc) { OfferGroup(acc, units + g * kGroupUnits, topk); });
  }
}

// As SumRow, for sums that may pass 16 bits: the 16-bit lanes take at most kWideSteps
// steps (each adds at most 510 in magnitude) and are then added into 32-bit sums.
template <Pair kPair>
void SumRowWide(const OneRowPlan& plan, const std::uint8_t* HWY_RESTRICT row,
                TopK<std::int32_t>& topk) {
  constexpr std::uint32_t kWideSteps = 64;
  const D16 d16;
  const std::uint32_t* HWY_RESTRICT steps = plan.batch_steps.data();
  const std::size_t batches = plan.batch_steps.size() - 1;
  std::int32_t sums[OneRowPlan::kBatchUnits];
  HWY_ALIGN std::int16_t lanes[kGroupUnits];
  for (std::size_t b = 0; b < batches; ++b) {
    std::fill(sums, sums + OneRowPlan::kBatchUnits, 0);
    for (std::uint32_t k = steps[b]; k < steps[b + 1]; k += kWideSteps) {
      SumSteps<kPair>(row, plan.windows.data() + k, std::min(kWideSteps, steps[b + 1] - k),
                      plan.slots.data() + std::size_t(k) * Shuffle16::kStepBytes,
                      [&](std::size_t g, V16 acc) {
                        hn::Store(acc, d16, lanes);
                        for (std::size_t l = 0; l < kGroupUnits; ++l)
                          sums[g * kGroupUnits + l] += lanes[l];
                      });
    }
    const std::uint32_t* units = plan.units.data() + b * OneRowPlan::kBatchUnits;
    for (std::uint32_t l = 0; l < OneRowPlan::kBatchUnits; ++l)
      if (units[l] != OneRowPlan::kNoUnit) topk.offer(0, sums[l], units[l]);
  }
}

bool ShuffleAvailable() { return true; }

void ProjectShuffle(const OneRowPlan& plan, const std::uint8_t* row, ByteValues values,
                    TopK<std::int32_t>& topk) {
  const bool is_signed = values == ByteValues::Signed;
  if (std::uint64_t(plan.s) * (is_signed ? 127 : 255) > 32767) {
    if (plan.signed_lifting) return SumRowWide<Pair::Difference>(plan, row, topk);
    if (is_signed) return SumRowWide<Pair::Signed>(plan, row, topk);
    return SumRowWide<Pair::Unsigned>(plan, row, topk);
  }
  if (plan.signed_lifting) return SumRow<Pair::Difference>(plan, row, topk);
  if (is_signed) return SumRow<Pair::Signed>(plan, row, topk);
  SumRow<Pair::Unsigned>(plan, row, topk);
}

#else  // HWY_SCALAR

bool ShuffleAvailable() { return false; }
void ProjectShuffle(const OneRowPlan&, const std::uint8_t*, ByteValues, TopK<std::int32_t>&) {}

#endif

}  // namespace HWY_NAMESPACE
}  // namespace flynn::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace flynn::kernels {

HWY_EXPORT(ShuffleAvailable);
HWY_EXPORT(ProjectShuffle);

bool detail::shuffle_kernel_available() { return HWY_DYNAMIC_DISPATCH(ShuffleAvailable)(); }

void detail::project_shuffle(const OneRowPlan& plan, const std::uint8_t* row, ByteValues values,
                     TopK<std::int32_t>& topk) {
  HWY_DYNAMIC_DISPATCH(ProjectShuffle)(plan, row, values, topk);
}

}  // namespace flynn::kernels
#endif  // HWY_ONCE
