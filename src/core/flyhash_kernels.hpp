#pragma once
// Runtime-dispatched SIMD kernels of FlyHash (Google Highway). The caller lays a block of
// rows out feature-major: column f of the block occupies xt[f·B, f·B + B) with B =
// block_rows_*(); each output unit then sums its s columns over B contiguous lanes (SIMD
// across the rows of the block, no gathers) and offers the lanes that reach their row's
// threshold to that row's TopK.
#include <cstddef>
#include <cstdint>

#include "core/topk.hpp"

namespace flynn::kernels {

/// Rows per block (lanes × 4 accumulators) of the best SIMD target of this CPU.
std::size_t block_rows_f32();
std::size_t block_rows_i16();
std::size_t block_rows_i32();

/// The lifting matrix's columns as the kernels read them: 16-bit indices when every
/// column fits (halves the bytes streamed per unit; Fashion-MNIST's matrix then fits in
/// L3), 32-bit otherwise. Exactly one of narrow/wide is set; s columns per unit.
struct Columns {
  const std::uint16_t* narrow = nullptr;
  const std::uint32_t* wide = nullptr;
  std::uint32_t s = 0;
};

/// For units [unit_begin, unit_end): activation sums over the block, offered to `topk`
/// (which holds block_rows_*() rows).
void project_wta(const float* xt, const Columns& cols, std::uint32_t unit_begin,
                 std::uint32_t unit_end, TopK<float>& topk);
void project_wta(const std::int16_t* xt, const Columns& cols, std::uint32_t unit_begin,
                 std::uint32_t unit_end, TopK<std::int16_t>& topk);
void project_wta(const std::int32_t* xt, const Columns& cols, std::uint32_t unit_begin,
                 std::uint32_t unit_end, TopK<std::int32_t>& topk);

/// The Highway target chosen at run time (e.g. "AVX3_ZEN4", "AVX2").
const char* simd_target_name();

}  // namespace flynn::kernels
