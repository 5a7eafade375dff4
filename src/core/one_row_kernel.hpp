#pragma once
// The one-row FlyHash kernels: one integer row held as bytes, the units of a OneRowPlan
// (one_row_plan.hpp) summed 32 at a time, vectorised across units; exact integer sums, so
// the winners are those of every other kernel. One kernel per layout:
//
// Permute128, on CPUs with AVX-512 VBMI and VNNI (Highway's AVX3_DL target: Ice Lake,
// Zen 4 and later). Per step and 16 units it is one load of slot bytes, one vpermi2b that
// looks the 64 columns up in the row's 128-byte window, (signed lifting: a masked
// negation) and one VNNI dot product with ±1 (vpdpbusd) that adds them into the units'
// int32 sums; the window's two 64-byte loads are shared by the batch. It is bound by
// streaming the plan (about 1.1 bytes per entry of the matrix) from the cache or memory,
// and the permutes and dot products about equally.
//
// Shuffle16, on every other SIMD target (SSSE3 and later, AVX2, AVX-512 without VBMI,
// NEON, SVE). Per step one broadcast load of the 16-byte window; per 32 slot bytes (16
// units × 2 of their columns on AVX2) one byte shuffle (pshufb; NEON tbl) looks them up,
// (signed lifting: psignb) and one multiply-add of byte pairs with ones (pmaddubsw; NEON
// vpaddl) adds each unit's two into its 16-bit lane. It streams about 2 bytes per entry
// of the matrix. Sums that could pass 16 bits (s·max|x| > 32767) are moved into 32-bit
// sums every 64 steps.
//
// Highway's SCALAR target has neither: rows take the block kernels, which give the same
// winners.
#include <cstdint>
#include <optional>

#include "core/one_row_plan.hpp"
#include "core/topk.hpp"

namespace flynn::kernels {

/// How the bytes of a row buffer hold its values.
enum class ByteValues {
  Unsigned,  ///< values 0..255 (plans without signed lifting only)
  Signed,    ///< values −127..127 as two's-complement bytes (negating one stays in range)
};

/// The layout whose kernel this CPU's best target (as Highway dispatches it) runs, if any.
std::optional<OneRowLayout> one_row_layout();
/// True when some one-row kernel runs here (one_row_layout() has a value).
inline bool one_row_kernel_available() { return one_row_layout().has_value(); }
/// What the kernel of `layout` is, in words (e.g. "byte shuffle (Shuffle16)").
const char* one_row_kernel_name(OneRowLayout layout);

/// Offers the activation of every unit of `plan` for the row in `row` to row 0 of `topk`.
/// `row` is a 64-byte aligned row buffer of plan.row_bytes() bytes laid out by
/// plan.lay_out_row. Requires one_row_layout() == plan.layout.
void project_one_row(const OneRowPlan& plan, const std::uint8_t* row, ByteValues values,
                     TopK<std::int32_t>& topk);

namespace detail {
/// The Shuffle16 kernel's dispatch (one_row_shuffle_kernel.cpp): whether this target has
/// it (all but SCALAR), and the kernel.
bool shuffle_kernel_available();
void project_shuffle(const OneRowPlan& plan, const std::uint8_t* row, ByteValues values,
                     TopK<std::int32_t>& topk);
}  // namespace detail

}  // namespace flynn::kernels
