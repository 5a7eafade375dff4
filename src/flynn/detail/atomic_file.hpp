#pragma once
// Crash-safe file output: write everything to a temporary file beside the target, flush
// it to disk, then rename it over the target. Readers see the old file or the new one,
// never a half-written one; on any error the temporary file is removed.
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace flynn::io {

/// Atomically replaces `path` with `bytes`. Throws flynn::Error naming the path.
void write_file_atomic(const std::string& path, std::string_view bytes);

/// Atomically replaces `path` with what `fill` writes to the stream (for text outputs
/// such as prediction CSVs and reports). Throws flynn::Error naming the path.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill);

}  // namespace flynn::io
