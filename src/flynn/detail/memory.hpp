#pragma once
// This machine's physical memory, as the memory guard (FlyConfig::check_memory) sees it.
#include <cstdint>

namespace flynn::detail {

/// Physical memory in bytes (16 GiB when the system does not say), or the override.
std::uint64_t physical_memory_bytes();

/// Makes physical_memory_bytes() return `bytes` (0 restores the real value), so tests can
/// exercise the guard without allocating gigabytes. Not thread-safe; tests only.
void override_physical_memory_bytes(std::uint64_t bytes);

}  // namespace flynn::detail
