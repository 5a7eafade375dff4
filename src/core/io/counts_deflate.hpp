#pragma once
// The model file's count stream (LEB128 varints, class-major), deflated in one pass over
// the counts without materialising the varints: a zlib stream (RFC 1950) holding one
// fixed-Huffman deflate block (RFC 1951) in which every run of equal bytes is a literal
// followed by matches at distance 1. Counts are mostly 0, so the varint stream is mostly
// long runs of zero bytes; this is zlib's Z_RLE strategy with the fixed code, at memory
// speed (a 2500-class model, m = 65536, 164 MB of varints: about 0.2 s, where zlib level 9
// took 20 s). Any inflate reads it back to exactly the bytes of the varint encoding.
#include <cstdint>
#include <string>

#include "flynn/class_counts.hpp"

namespace flynn::io::detail {

/// The deflated count stream of `counts`, and in `raw_length` the length of the varint
/// stream it decompresses to. Deterministic: the same counts give the same bytes.
std::string deflate_counts(const ClassCounts& counts, std::uint64_t& raw_length);

}  // namespace flynn::io::detail
