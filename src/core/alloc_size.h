// jemalloc's size classes, so packed structures can size their blocks to what the allocator
// really hands out instead of paying for its rounding.
//
// jemalloc (4 KiB pages, 16-byte quantum) serves 8, then multiples of 16 up to 128, then four
// classes per doubling: 160, 192, 224, 256, 320, 384, ... A block of a class size costs exactly
// its size. Under another allocator (the sanitizer builds use glibc's) these are only good
// guesses; callers still read the real capacity back with malloc_usable_size.
#pragma once

#include <malloc.h>

#include <cstddef>
#include <cstdlib>

namespace goblin {

// The smallest class that holds n bytes.
constexpr size_t SizeClassAtLeast(size_t n) {
  if (n <= 8) return 8;
  if (n <= 128) return (n + 15) & ~size_t{15};
  const int k = 63 - __builtin_clzll(n - 1);  // 2^k < n <= 2^(k+1)
  const size_t spacing = size_t{1} << (k - 2);
  return (n + spacing - 1) & ~(spacing - 1);
}

// The largest class that fits in n bytes (0 when n < 8).
constexpr size_t SizeClassAtMost(size_t n) {
  if (n < 8) return 0;
  if (n < 16) return 8;
  if (n <= 128) return n & ~size_t{15};
  const int k = 63 - __builtin_clzll(n);  // 2^k <= n < 2^(k+1)
  const size_t spacing = size_t{1} << (k - 2);
  return n & ~(spacing - 1);
}

// What the allocator charges for a block from malloc/realloc.
inline size_t AllocatedSize(const void* p) {
  return p == nullptr ? 0 : malloc_usable_size(const_cast<void*>(p));
}

// malloc that aborts on failure, like operator new without the exception.
inline void* CheckedMalloc(size_t n) {
  void* p = std::malloc(n);
  if (p == nullptr) std::abort();
  return p;
}
inline void* CheckedRealloc(void* p, size_t n) {
  void* q = std::realloc(p, n);
  if (q == nullptr) std::abort();
  return q;
}

}  // namespace goblin
