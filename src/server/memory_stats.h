// Process memory as INFO reports it: what the allocator handed out (used_memory, from its own
// statistics, never an estimate) and what the kernel keeps resident (used_memory_rss, read
// from /proc/self/statm at the moment of the call, never cached).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

size_t AllocatedBytes();
size_t ResidentBytes();
// Bytes the allocator holds in active pages / mapped from the kernel (0 when unknown).
size_t AllocatorActiveBytes();
size_t AllocatorResidentBytes();
std::string_view AllocatorName();
// Turns the allocator's background threads (which return freed pages to the kernel off the
// serving thread) on or off: jemalloc-bg-thread. False when the allocator refused; true and
// nothing done without jemalloc.
bool SetAllocatorBackgroundThreads(bool on);
// DEBUG MALLCTL and MALLCTL-STR: one of jemalloc's controls (mallctl), as Redis reads and sets
// it. Each returns "" and *reply (the old value, or "OK" for a control that can only be
// written), or the error text (strerror of jemalloc's answer). AllocatorHasControls() is false
// without jemalloc, and the functions then answer ENOTSUP.
bool AllocatorHasControls();
// An integer control, written with *value when value is not null; tried as 8, 4, 2 and 1 bytes
// wide until jemalloc accepts the size.
std::string AllocatorControlInt(const std::string& name, const int64_t* value, int64_t* old,
                                bool* wrote_only);
// A string control (its old value read first), written with *value when not null; "VOID"
// writes nothing but calls the control (as Redis's does).
std::string AllocatorControlString(const std::string& name, const std::string* value,
                                   std::string* old, bool* wrote_only);

// One field of /proc/self/smaps_rollup ("Private_Dirty", "AnonHugePages") summed over this
// process's mappings, in bytes; 0 when it cannot be read.
uint64_t SmapsBytes(std::string_view field);

// used_memory cheaply enough to check before every command (maxmemory): the last exact reading
// (AllocatedBytes) moved by what the serving thread allocated and freed since, from the
// allocator's per-thread counters (two loads). Other threads' allocations (the AOF fsync
// thread, a loader's index builder) show up at the next Sync. Without jemalloc every Read is
// an exact reading. Use from the serving thread only.
class UsedMemoryGauge {
 public:
  size_t Sync();
  size_t Read() const;

 private:
  int64_t ThreadNet() const;  // bytes this thread allocated minus bytes it freed, ever

  size_t base_ = 0;
  int64_t net_at_base_ = 0;
  const uint64_t* allocated_ = nullptr;  // jemalloc's counters for the serving thread
  const uint64_t* deallocated_ = nullptr;
};

}  // namespace goblin
