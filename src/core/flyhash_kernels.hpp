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

/// For units [unit_begin, unit_end) with columns cols[unit·s, unit·s + s): activation sums
/// over the block, offered to `topk` (which holds block_rows_*() rows).
void project_wta_f32(const float* xt, const std::uint32_t* cols, std::uint32_t s,
                     std::uint32_t unit_begin, std::uint32_t unit_end, TopK<float>& topk);
void project_wta_i16(const std::int16_t* xt, const std::uint32_t* cols, std::uint32_t s,
                     std::uint32_t unit_begin, std::uint32_t unit_end, TopK<std::int16_t>& topk);
void project_wta_i32(const std::int32_t* xt, const std::uint32_t* cols, std::uint32_t s,
                     std::uint32_t unit_begin, std::uint32_t unit_end, TopK<std::int32_t>& topk);

/// The Highway target chosen at run time (e.g. "AVX3_ZEN4", "AVX2").
const char* simd_target_name();

}  // namespace flynn::kernels
