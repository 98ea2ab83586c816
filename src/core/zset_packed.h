// Packed (score, member) runs: the byte format shared by the small sorted-set form
// (ZsetListpack) and the leaves of the large form (ZsetTree).
//
// A run is `count` entries packed back to back, ordered by (score, member):
//
//   entry := [key delta: varint][member length << 1 | negative_zero: varint][member bytes]
//
//   +--------+-----+--------+--------+-----+--------+---
//   | key0   | l0  | m0 ... | k1-k0  | l1  | m1 ... | ...
//   +--------+-----+--------+--------+-----+--------+---
//
// The key is the score mapped to an order-preserving u64 (ScoreToKey): flip the sign bit of a
// positive double, all bits of a negative one, so unsigned comparison of keys is numeric
// comparison of scores. The first entry stores its key whole (delta from 0), every later entry
// the difference to its predecessor. Random 6-decimal scores of a million-member set differ by
// about 2^33 ulps between neighbours, so a delta takes 5 bytes instead of 8; integer ratings
// repeat, and a repeated score costs one byte.
//
// Invariants:
//  1. Entries are strictly increasing by (key, member); members compare as bytes (memcmp), a
//     proper prefix first, which is Redis's order. No member appears twice.
//  2. -0.0 and +0.0 have the same key (Redis compares scores with <, so they tie and order by
//     member); the sign of a zero survives in the low bit of the length field.
//  3. NaN never enters a run (the command layer rejects it); +-inf are ordinary keys.
//  4. Removing an entry never makes the run longer: the merged delta of its neighbours needs no
//     more bytes than the two deltas it replaces, so erasure can always be done in place.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/varint.h"

namespace goblin {

inline constexpr uint64_t kScoreKeySignBit = uint64_t{1} << 63;

// Maps a score to a u64 whose unsigned order is the score order. -0.0 maps like +0.0.
// REQUIRES: score is not NaN.
inline uint64_t ScoreToKey(double score) {
  if (score == 0) score = 0.0;
  const uint64_t bits = std::bit_cast<uint64_t>(score);
  return (bits & kScoreKeySignBit) ? ~bits : bits | kScoreKeySignBit;
}

inline double KeyToScore(uint64_t key, bool negative_zero) {
  if (negative_zero) return -0.0;
  const uint64_t bits = (key & kScoreKeySignBit) ? key & ~kScoreKeySignBit : ~key;
  return std::bit_cast<double>(bits);
}

inline bool IsNegativeZero(double score) { return score == 0 && std::signbit(score); }

// One decoded entry. `member` points into the run it was decoded from.
struct ZsetEntry {
  uint64_t key = 0;
  bool negative_zero = false;
  std::string_view member;

  double score() const { return KeyToScore(key, negative_zero); }
};

// Three-way comparison of (key, member) pairs in run order.
inline int CompareZsetKeys(uint64_t a_key, std::string_view a_member, uint64_t b_key,
                           std::string_view b_member) {
  if (a_key != b_key) return a_key < b_key ? -1 : 1;
  const int c = a_member.compare(b_member);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// A member's first 8 bytes as a big-endian number, zero-padded. Prefixes order like members
// (a < b implies MemberPrefix(a) <= MemberPrefix(b)), so unequal prefixes decide a comparison
// without the rest of the member.
inline uint64_t MemberPrefix(std::string_view member) {
  static_assert(std::endian::native == std::endian::little);
  uint64_t value = 0;
  std::memcpy(&value, member.data(), member.size() < 8 ? member.size() : 8);
  return __builtin_bswap64(value);
}

// Bytes an entry takes when its predecessor's key is `delta` below its own.
inline size_t ZsetEntrySize(uint64_t delta, size_t member_size) {
  return VarintSize(delta) + VarintSize(uint64_t{member_size} << 1) + member_size;
}

// Writes one entry at p and returns the byte after it.
inline uint8_t* EncodeZsetEntry(uint8_t* p, uint64_t delta, bool negative_zero,
                                std::string_view member) {
  p = PutVarint(p, delta);
  p = PutVarint(p, (uint64_t{member.size()} << 1) | (negative_zero ? 1 : 0));
  if (!member.empty()) std::memcpy(p, member.data(), member.size());
  return p + member.size();
}

// Decodes the entry at p whose predecessor has key prev_key (0 for the first entry).
inline const uint8_t* DecodeZsetEntry(const uint8_t* p, uint64_t prev_key, ZsetEntry* entry) {
  uint64_t delta;
  uint64_t length_field;
  p = GetVarint(p, &delta);
  p = GetVarint(p, &length_field);
  entry->key = prev_key + delta;
  entry->negative_zero = (length_field & 1) != 0;
  entry->member = std::string_view(reinterpret_cast<const char*>(p), length_field >> 1);
  return p + (length_field >> 1);
}

// A position inside a run: entry `index` starts at byte `offset`, and the entry before it has
// key `prev_key` (0 at the start). index == count means the end of the run.
struct ZsetRunPosition {
  uint32_t index = 0;
  uint32_t offset = 0;
  uint64_t prev_key = 0;
};

// Finds `member` by linear scan. On success fills *pos (the entry's position) and *entry.
// Inline: it is the inner loop of ZSCORE, ZADD and ZRANK on both forms.
inline bool ZsetRunFind(const uint8_t* data, uint32_t count, std::string_view member,
                        ZsetRunPosition* pos, ZsetEntry* entry) {
  const size_t size = member.size();
  // Members of one set tend to share a prefix ("user:00..."), so the last 8 bytes reject a
  // wrong candidate sooner than memcmp from the front.
  uint64_t tail = 0;
  if (size >= 8) std::memcpy(&tail, member.data() + size - 8, 8);
  const uint8_t* p = data;
  uint64_t key = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* start = p;
    uint64_t delta;
    p = GetVarint(p, &delta);
    uint64_t length_field;
    if (*p < 0x80) {
      length_field = *p++;
    } else {
      p = GetVarint(p, &length_field);
    }
    const size_t entry_size = length_field >> 1;
    if (entry_size == size) {
      bool same;
      if (size >= 8) {
        uint64_t entry_tail;
        std::memcpy(&entry_tail, p + size - 8, 8);
        same = entry_tail == tail && std::memcmp(p, member.data(), size - 8) == 0;
      } else {
        same = size == 0 || std::memcmp(p, member.data(), size) == 0;
      }
      if (same) {
        pos->index = i;
        pos->offset = static_cast<uint32_t>(start - data);
        pos->prev_key = key;
        entry->key = key + delta;
        entry->negative_zero = (length_field & 1) != 0;
        entry->member = std::string_view(reinterpret_cast<const char*>(p), size);
        return true;
      }
    }
    key += delta;
    p += entry_size;
  }
  return false;
}

// Position of the first entry >= (key, member), or the end.
ZsetRunPosition ZsetRunLowerBound(const uint8_t* data, uint32_t count, uint64_t key,
                                  std::string_view member);

// Position of entry `index`. REQUIRES: index <= count.
ZsetRunPosition ZsetRunSeek(const uint8_t* data, uint32_t index);

// Number of entries with key < `key` (or <= when inclusive).
uint32_t ZsetRunCountBelowKey(const uint8_t* data, uint32_t count, uint64_t key, bool inclusive);

// Bytes the run grows by when (key, member) is inserted at pos (may be negative when the new
// entry shortens its successor's delta).
// REQUIRES: pos was computed on this run; inserting there keeps invariant 1.
ptrdiff_t ZsetRunInsertGrowth(const uint8_t* data, uint32_t count, uint32_t used,
                              const ZsetRunPosition& pos, uint64_t key, std::string_view member);

// Inserts at pos and returns the new byte length.
// REQUIRES: capacity >= used + ZsetRunInsertGrowth(...); member does not alias the run.
uint32_t ZsetRunInsert(uint8_t* data, uint32_t count, uint32_t used, const ZsetRunPosition& pos,
                       uint64_t key, bool negative_zero, std::string_view member);

// Removes entries [pos.index, pos.index + n) and returns the new byte length.
// REQUIRES: pos.index + n <= count.
uint32_t ZsetRunErase(uint8_t* data, uint32_t count, uint32_t used, const ZsetRunPosition& pos,
                      uint32_t n);

}  // namespace goblin
