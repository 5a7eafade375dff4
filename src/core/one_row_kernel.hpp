#pragma once
// The one-row FlyHash kernel (issue 21): one integer row held as bytes, the units of a
// OneRowPlan (one_row_plan.hpp) summed 32 at a time. Per step and 16 units it is one load of
// slot bytes, one AVX-512 VBMI permute that looks the 64 columns up in the row's 128-byte
// window, (signed lifting: a masked negation) and one VNNI dot product with ±1 that adds
// them into the units' int32 sums; the window's two 64-byte loads are shared by the batch.
// It is bound by streaming the plan (about 1.1 bytes per entry of the matrix) from the
// cache or memory, and the permutes and dot products about equally.
// Exact integer sums, so the winners are those of every other kernel.
//
// Only CPUs with AVX-512 VBMI and VNNI (Highway's AVX3_DL target: Ice Lake, Zen 4 and
// later) have it; elsewhere one_row_kernel_available() is false and rows take the block
// kernels, which give the same winners.
#include <cstdint>

#include "core/one_row_plan.hpp"
#include "core/topk.hpp"

namespace flynn::kernels {

/// How the bytes of a row buffer hold its values.
enum class ByteValues {
  Unsigned,  ///< values 0..255 (plans without signed lifting only)
  Signed,    ///< values −127..127 as two's-complement bytes (negating one stays in range)
};

/// True when this CPU's best target (as Highway dispatches it) runs the one-row kernel.
bool one_row_kernel_available();

/// Offers the activation of every unit of `plan` for the row in `row` to row 0 of `topk`.
/// `row` is a 64-byte aligned row buffer of plan.row_bytes() bytes in the plan's layout
/// (both copies; zero bytes at every block's end). Requires one_row_kernel_available().
void project_one_row(const OneRowPlan& plan, const std::uint8_t* row, ByteValues values,
                     TopK<std::int32_t>& topk);

}  // namespace flynn::kernels
