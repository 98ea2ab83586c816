// Process memory as INFO reports it: what the allocator handed out (used_memory, from its own
// statistics, never an estimate) and what the kernel keeps resident (used_memory_rss, read
// from /proc/self/statm at the moment of the call, never cached).
#pragma once

#include <cstddef>
#include <string_view>

namespace goblin {

size_t AllocatedBytes();
size_t ResidentBytes();
// Bytes the allocator holds in active pages / mapped from the kernel (0 when unknown).
size_t AllocatorActiveBytes();
size_t AllocatorResidentBytes();
std::string_view AllocatorName();

}  // namespace goblin
