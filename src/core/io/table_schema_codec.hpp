#pragma once
// The table section of a model file (format 3): a TableSchema's bytes. Kept apart from
// model_file.cpp so the section can change without touching the rest of the format.
#include <cstdint>

#include "core/io/byte_codec.hpp"
#include "flynn/table_schema.hpp"

namespace flynn::io::detail {

/// Appends the section:
///   named u8 (0/1); label_name, id_name (u32 length + bytes);
///   n_columns u32; per column { name (u32 length + bytes), n_categories u32,
///                               n_categories × (u32 length + bytes) };
///   has_fill u8; when 1, n_features × f32 (the missing-value fill means).
void write_table_schema(ByteWriter& w, const TableSchema& schema);

/// Reads the section; `d` is the model's input dimension, which the columns' widths must
/// add up to. Every problem goes through the reader's fail handler (names, counts beyond
/// what the remaining bytes can hold, non-finite fill values, duplicate categories).
TableSchema read_table_schema(ByteReader& r, std::uint32_t d);

}  // namespace flynn::io::detail
