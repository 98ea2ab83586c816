#include "core/zset_packed.h"

#include <cassert>
#include <cmath>

namespace goblin {

ZsetRunPosition ZsetRunLowerBound(const uint8_t* data, uint32_t count, uint64_t key,
                                  std::string_view member) {
  ZsetRunPosition pos;
  const uint8_t* p = data;
  ZsetEntry e;
  for (; pos.index < count; ++pos.index) {
    const uint8_t* next = DecodeZsetEntry(p, pos.prev_key, &e);
    if (CompareZsetKeys(e.key, e.member, key, member) >= 0) break;
    pos.prev_key = e.key;
    p = next;
  }
  pos.offset = static_cast<uint32_t>(p - data);
  return pos;
}

ZsetRunPosition ZsetRunSeek(const uint8_t* data, uint32_t index) {
  ZsetRunPosition pos;
  const uint8_t* p = data;
  for (; pos.index < index; ++pos.index) {
    uint64_t delta;
    uint64_t length_field;
    p = GetVarint(p, &delta);
    p = GetVarint(p, &length_field);
    p += length_field >> 1;
    pos.prev_key += delta;
  }
  pos.offset = static_cast<uint32_t>(p - data);
  return pos;
}

uint32_t ZsetRunCountBelowKey(const uint8_t* data, uint32_t count, uint64_t key, bool inclusive) {
  const uint8_t* p = data;
  uint64_t k = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t delta;
    p = GetVarint(p, &delta);
    k += delta;
    if (inclusive ? k > key : k >= key) return i;
    uint64_t length_field;
    p = GetVarint(p, &length_field);
    p += length_field >> 1;
  }
  return count;
}

ptrdiff_t ZsetRunInsertGrowth(const uint8_t* data, uint32_t count, uint32_t used,
                              const ZsetRunPosition& pos, uint64_t key, std::string_view member) {
  (void)used;
  ptrdiff_t growth = static_cast<ptrdiff_t>(ZsetEntrySize(key - pos.prev_key, member.size()));
  if (pos.index < count) {
    uint64_t old_delta;
    GetVarint(data + pos.offset, &old_delta);
    const uint64_t next_key = pos.prev_key + old_delta;
    growth += static_cast<ptrdiff_t>(VarintSize(next_key - key)) -
              static_cast<ptrdiff_t>(VarintSize(old_delta));
  }
  return growth;
}

uint32_t ZsetRunInsert(uint8_t* data, uint32_t count, uint32_t used, const ZsetRunPosition& pos,
                       uint64_t key, bool negative_zero, std::string_view member) {
  uint8_t* at = data + pos.offset;
  const size_t entry_size = ZsetEntrySize(key - pos.prev_key, member.size());
  if (pos.index == count) {
    EncodeZsetEntry(at, key - pos.prev_key, negative_zero, member);
    return used + static_cast<uint32_t>(entry_size);
  }
  // The successor keeps its bytes after its delta; only the delta is re-encoded.
  uint64_t old_delta;
  const uint8_t* rest = GetVarint(at, &old_delta);
  const uint64_t next_key = pos.prev_key + old_delta;
  const size_t old_delta_size = static_cast<size_t>(rest - at);
  const size_t new_delta_size = VarintSize(next_key - key);
  const size_t tail = used - pos.offset - old_delta_size;
  uint8_t* new_rest = at + entry_size + new_delta_size;
  std::memmove(new_rest, rest, tail);
  uint8_t* p = EncodeZsetEntry(at, key - pos.prev_key, negative_zero, member);
  PutVarint(p, next_key - key);
  return static_cast<uint32_t>(used + entry_size + new_delta_size - old_delta_size);
}

uint32_t ZsetRunErase(uint8_t* data, uint32_t count, uint32_t used, const ZsetRunPosition& pos,
                      uint32_t n) {
  if (n == 0) return used;
  uint8_t* at = data + pos.offset;
  const uint8_t* p = at;
  uint64_t key = pos.prev_key;
  for (uint32_t i = 0; i < n; ++i) {
    ZsetEntry e;
    p = DecodeZsetEntry(p, key, &e);
    key = e.key;
  }
  if (pos.index + n == count) return pos.offset;
  // The first survivor's delta now spans the erased entries.
  uint64_t old_delta;
  const uint8_t* rest = GetVarint(p, &old_delta);
  const uint64_t next_key = key + old_delta;
  uint8_t* q = PutVarint(at, next_key - pos.prev_key);
  const size_t tail = used - static_cast<size_t>(rest - data);
  assert(q <= rest);
  std::memmove(q, rest, tail);
  return static_cast<uint32_t>((q - data) + tail);
}

}  // namespace goblin
