#pragma once
// Runtime-dispatched SIMD kernels of FlyHash (Google Highway).
//
// The caller lays a block of B rows out feature-major: column f of the block occupies
// xt[f·B, f·B + B). One SIMD vector holds one column of the block (B = the vector's
// lanes), and four output units are summed at a time, each from its s columns (SIMD
// across the rows of the block, no gathers, four independent add chains). Lanes that
// reach their row's threshold are offered to that row's TopK.
//
// Block width: the block must stay in L1 for the column loads to be cheap, so a kernel
// uses half-width vectors when a full-width block of the data's columns would exceed
// kL1BlockBytes. Pixel-like rows (integers 0..255) and small signed integers (−127..127,
// e.g. the quantised variants' rows) are stored as bytes and widened to int16 on load,
// which halves the bytes per addition again. Integer rows of a signed variant are stored
// without their mirror (Columns::units, signed_columns.hpp).
#include <cstddef>
#include <cstdint>

#include "core/topk.hpp"

namespace flynn::kernels {

/// How a block stores its values and what the kernel adds them in.
enum class Lane {
  U8,   ///< stored uint8, summed in int16 (integers 0..255, s ≤ 128)
  S8,   ///< stored int8, summed in int16 (integers −127..127 with s·max|x| ≤ 32767)
  I16,  ///< stored and summed in int16 (integers with s·max|x| ≤ 32767)
  I32,  ///< stored and summed in int32 (integers with s·max|x| < 2^31)
  F32,  ///< stored and summed in float
};

/// The lifting matrix's columns as the kernels read them: 16-bit indices when every
/// column fits (halves the bytes streamed per unit), 32-bit otherwise. Exactly one of
/// narrow/wide is set; s columns per unit.
///
/// With `units` set, the columns are a signed layout (signed_columns.hpp), read by the
/// int8 and int16 kernels only: the block holds the w columns of e, not the mirrored 2w;
/// `narrow` holds position p's columns, position p is unit units[p], and its columns after
/// the first positives[p] are subtracted. Unit ranges are then ranges of positions.
struct Columns {
  const std::uint16_t* narrow = nullptr;
  const std::uint32_t* wide = nullptr;
  std::uint32_t s = 0;
  const std::uint32_t* units = nullptr;
  const std::uint16_t* positives = nullptr;
};

/// A kernel's block: `rows` rows (the lanes of one vector), `half` when half-width
/// vectors are used to keep columns × rows × element size within L1.
struct BlockShape {
  std::size_t rows = 0;
  bool half = false;
};

/// The block shape for `lane` over `columns` input columns, on this CPU's best target.
BlockShape block_shape(Lane lane, std::uint32_t columns);

/// For units [unit_begin, unit_end): activation sums over the block, offered to `topk`
/// (which holds shape.rows rows). `xt` is columns × shape.rows elements.
void project_wta(const std::uint8_t* xt, const Columns& cols, BlockShape shape,
                 std::uint32_t unit_begin, std::uint32_t unit_end, TopK<std::int16_t>& topk);
void project_wta(const std::int8_t* xt, const Columns& cols, BlockShape shape,
                 std::uint32_t unit_begin, std::uint32_t unit_end, TopK<std::int16_t>& topk);
void project_wta(const std::int16_t* xt, const Columns& cols, BlockShape shape,
                 std::uint32_t unit_begin, std::uint32_t unit_end, TopK<std::int16_t>& topk);
void project_wta(const std::int32_t* xt, const Columns& cols, BlockShape shape,
                 std::uint32_t unit_begin, std::uint32_t unit_end, TopK<std::int32_t>& topk);
void project_wta(const float* xt, const Columns& cols, BlockShape shape,
                 std::uint32_t unit_begin, std::uint32_t unit_end, TopK<float>& topk);

/// The Highway target chosen at run time (e.g. "AVX3", "AVX2").
const char* simd_target_name();

}  // namespace flynn::kernels
