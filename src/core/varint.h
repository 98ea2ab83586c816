// LEB128 unsigned varints: 7 bits per byte, high bit set on every byte but the last.
// Lengths inside packed entries use them, so a 13-byte member costs one length byte.
#pragma once

#include <cstddef>
#include <cstdint>

namespace goblin {

constexpr size_t kMaxVarintBytes = 10;

inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Writes v at p and returns the byte after it. REQUIRES: room for VarintSize(v) bytes.
inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Reads a varint at p into *v and returns the byte after it.
// REQUIRES: p holds a complete varint written by PutVarint (the data is trusted).
inline const uint8_t* GetVarint(const uint8_t* p, uint64_t* v) {
  uint64_t result = 0;
  int shift = 0;
  while (*p & 0x80) {
    result |= static_cast<uint64_t>(*p++ & 0x7f) << shift;
    shift += 7;
  }
  *v = result | (static_cast<uint64_t>(*p++) << shift);
  return p;
}

// The same for bytes nobody vouches for (snapshots, dumps): reads a varint from [p, end) and
// returns the byte after it, or nullptr when it runs past end or past ten bytes.
inline const uint8_t* GetVarintChecked(const uint8_t* p, const uint8_t* end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63; shift += 7) {
    if (p >= end) return nullptr;
    const uint8_t b = *p++;
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = result;
      return p;
    }
  }
  return nullptr;
}

// Signed integers as varints: 0, -1, 1, -2, ... become 0, 1, 2, 3, ...
inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

}  // namespace goblin
