#include "server/memory_stats.h"

#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#ifdef GOBLIN_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#elif defined(__SANITIZE_ADDRESS__)
// From the sanitizer runtime (its header is not always installed).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace goblin {

#ifdef GOBLIN_HAVE_JEMALLOC
namespace {

// jemalloc caches its statistics; bumping the epoch refreshes them.
size_t ReadJemallocStat(const char* name) {
  uint64_t epoch = 1;
  size_t epoch_size = sizeof(epoch);
  mallctl("epoch", &epoch, &epoch_size, &epoch, epoch_size);
  size_t value = 0;
  size_t size = sizeof(value);
  if (mallctl(name, &value, &size, nullptr, 0) != 0) return 0;
  return value;
}

}  // namespace

size_t AllocatedBytes() {
  // Objects parked in this thread's cache count as allocated until the cache is flushed, which
  // made used_memory drift by hundreds of KB (it even fell while a set grew). The serving
  // thread does all data allocation, so flushing its cache makes the figure exact.
  mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
  return ReadJemallocStat("stats.allocated");
}
size_t AllocatorActiveBytes() { return ReadJemallocStat("stats.active"); }
bool SetAllocatorBackgroundThreads(bool on) {
  return mallctl("background_thread", nullptr, nullptr, &on, sizeof(on)) == 0;
}
size_t AllocatorResidentBytes() { return ReadJemallocStat("stats.resident"); }
std::string_view AllocatorName() {
  static char name[64];
  if (name[0] == '\0') {
    const char* version = "unknown";
    size_t size = sizeof(version);
    mallctl("version", &version, &size, nullptr, 0);
    std::snprintf(name, sizeof(name), "jemalloc-%.*s", 5, version);
  }
  return name;
}
bool AllocatorHasControls() { return true; }

std::string AllocatorControlInt(const std::string& name, const int64_t* value, int64_t* old,
                                bool* wrote_only) {
  *wrote_only = false;
  for (size_t width = sizeof(int64_t); width > 0; width /= 2) {
    // The value's low bytes come first on little-endian machines, whatever the width.
    int64_t read = 0;
    size_t read_size = width;
    int64_t written = value != nullptr ? *value : 0;
    int status = mallctl(name.c_str(), &read, &read_size, value != nullptr ? &written : nullptr,
                         value != nullptr ? width : 0);
    if (status == EPERM && value != nullptr) {
      status = mallctl(name.c_str(), nullptr, nullptr, &written, width);  // write-only
      if (status == 0) {
        *wrote_only = true;
        return "";
      }
    }
    if (status == EINVAL) continue;  // another width
    if (status != 0) return std::strerror(status);
    // Sign-extend what a narrower control gave.
    const int shift = static_cast<int>(64 - 8 * width);
    *old = shift == 0 ? read : static_cast<int64_t>(static_cast<uint64_t>(read) << shift) >> shift;
    return "";
  }
  return std::strerror(EINVAL);
}

std::string AllocatorControlString(const std::string& name, const std::string* value,
                                   std::string* old, bool* wrote_only) {
  *wrote_only = false;
  const char* read = nullptr;
  size_t size = sizeof(read);
  const int read_status = mallctl(name.c_str(), &read, &size, nullptr, 0);
  if (read_status != 0 && !(read_status == EPERM && value != nullptr)) {
    return std::strerror(read_status);
  }
  if (value != nullptr) {
    const char* text = value->c_str();
    const bool call_only = *value == "VOID";
    const int write_status = call_only
                                 ? mallctl(name.c_str(), nullptr, nullptr, nullptr, 0)
                                 : mallctl(name.c_str(), nullptr, nullptr, &text, sizeof(text));
    if (read_status != 0) {
      if (write_status != 0) return std::strerror(write_status);
      *wrote_only = true;
      return "";
    }
  }
  *old = read != nullptr ? read : "";
  return "";
}
#else
bool AllocatorHasControls() { return false; }
std::string AllocatorControlInt(const std::string&, const int64_t*, int64_t*, bool*) {
  return std::strerror(ENOTSUP);
}
std::string AllocatorControlString(const std::string&, const std::string*, std::string*, bool*) {
  return std::strerror(ENOTSUP);
}
bool SetAllocatorBackgroundThreads(bool) { return true; }
size_t AllocatedBytes() {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer replaces malloc; its own counter is the honest figure.
  return __sanitizer_get_current_allocated_bytes();
#else
  struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}
size_t AllocatorActiveBytes() { return 0; }
size_t AllocatorResidentBytes() { return 0; }
std::string_view AllocatorName() { return "libc"; }
#endif

size_t UsedMemoryGauge::Sync() {
#ifdef GOBLIN_HAVE_JEMALLOC
  if (allocated_ == nullptr) {
    uint64_t* pointer = nullptr;
    size_t size = sizeof(pointer);
    if (mallctl("thread.allocatedp", &pointer, &size, nullptr, 0) == 0) allocated_ = pointer;
    size = sizeof(pointer);
    if (mallctl("thread.deallocatedp", &pointer, &size, nullptr, 0) == 0) deallocated_ = pointer;
    if (allocated_ == nullptr || deallocated_ == nullptr) allocated_ = deallocated_ = nullptr;
  }
#endif
  base_ = AllocatedBytes();
  net_at_base_ = ThreadNet();
  return base_;
}

size_t UsedMemoryGauge::Read() const {
  if (allocated_ == nullptr) return AllocatedBytes();
  const int64_t moved = ThreadNet() - net_at_base_;
  return moved < 0 && static_cast<size_t>(-moved) > base_ ? 0 : base_ + moved;
}

int64_t UsedMemoryGauge::ThreadNet() const {
  if (allocated_ == nullptr) return 0;
  return static_cast<int64_t>(*allocated_ - *deallocated_);
}

size_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

uint64_t SmapsBytes(std::string_view field) {
  std::ifstream smaps("/proc/self/smaps_rollup");
  std::string line;
  uint64_t total = 0;
  while (std::getline(smaps, line)) {
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 &&
        line[field.size()] == ':') {
      total += std::strtoull(line.c_str() + field.size() + 1, nullptr, 10) * 1024;
    }
  }
  return total;
}

}  // namespace goblin
