// The member -> leaf index of a large sorted set.
//
// ZSCORE, ZADD and ZREM start from a member, but the tree is ordered by score: this table says
// which leaf holds a member, and the leaf is then scanned. A slot holds no member bytes and no
// full hash, only enough to find the leaf and to be moved when the table grows:
//
//   slot (4 bytes + its 1-byte tag in the tag array):
//   +--------------------------------+--------+
//   | leaf number (26 bits)          | spare 6|
//   +--------------------------------+--------+
//   spare = 1 marker bit followed by k <= 5 hash bits: bits [depth, depth + k) of the hash
//
//   segment (one allocation, sized to the allocator's size class):
//   +-------+----------+-------------------------------+-----------------------------+
//   | count | capacity | tags: capacity bytes, padded  | slots: capacity x u32       |
//   | u16   | u16      | to 16 (hash bits 56..63)      |                             |
//   +-------+----------+-------------------------------+-----------------------------+
//
// Segments are found by linear hashing (Litwin): with level L and split pointer p, a hash h
// lives in segment h mod 2^L, or h mod 2^(L+1) when that is below p. The table grows by
// splitting segment p into p and p + 2^L, one segment per step, whenever the average segment
// holds more than kTargetPerSegment members, and shrinks by merging the last segment back into
// its buddy when the average falls below half of that. So growth moves at most one segment's slots
// (about a hundred), never the whole table, and the load never falls by half as it does when a
// table doubles: at every size the index costs about 6 bytes per member.
//
// Splitting needs hash bit `depth` of every slot, which a slot does not hold in full. The spare
// field carries the next few bits; each split consumes one. When a slot has none left (after
// its segment split 5 times, i.e. the set grew ~32x since the slot was written) the split asks
// the tree for the hashes of the members in that slot's leaf (ZsetLeafHashes) and writes fresh
// bits. Relocating a slot (its member moved to another leaf) also writes fresh bits.
//
// A lookup compares the 8-bit tag of all slots of one segment at once (SSE2), then the spare
// bits, and asks the caller to search each candidate leaf: false candidates cost a leaf scan.
//
// Invariants:
//  1. For every member m of the set in leaf f, there is a distinct slot in segment
//     Address(hash(m)) with tag hash(m) >> 56, leaf f, and spare bits equal to the hash bits
//     they claim (a perfect matching of members to slots).
//  2. Segment s has depth L + 1 when s < p or s >= 2^L, else L; all hashes in it agree with s
//     on their low `depth` bits.
//  3. count <= capacity <= 65535; capacity is the most that fits the segment's allocation.
//
// Not thread-safe; the server's single command thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/zset_chunked_array.h"

namespace goblin {

// Supplies the member hashes of a leaf, for the rare split that has run out of stored bits.
class ZsetLeafHashes {
 public:
  virtual ~ZsetLeafHashes() = default;
  virtual void HashesInLeaf(uint32_t leaf, std::vector<uint64_t>* hashes) const = 0;
};

class ZsetMemberIndex {
 public:
  static constexpr uint32_t kMaxLeaf = (uint32_t{1} << 26) - 1;
  // Average members per segment before the next split. Segments before the split pointer hold
  // about half of those after it, so the largest scanned segment holds ~2x this.
  static constexpr size_t kTargetPerSegment = 40;

  ZsetMemberIndex();
  ~ZsetMemberIndex();
  ZsetMemberIndex(const ZsetMemberIndex&) = delete;
  ZsetMemberIndex& operator=(const ZsetMemberIndex&) = delete;

  size_t size() const { return size_; }
  size_t segment_count() const { return segments_.size(); }
  size_t slot_capacity() const { return slot_capacity_; }
  // Slots whose stored bits ran out and were recomputed from their leaf (for tests and stats).
  size_t refreshed_slots() const { return refreshed_slots_; }

  // Calls probe(leaf) for each leaf that may hold the member with this hash until it returns
  // true. Returns whether a probe returned true.
  template <typename Probe>
  bool Find(uint64_t hash, Probe&& probe) const;

  // Adds a slot for a member now in `leaf`. May split one segment, which may call `hashes`.
  // REQUIRES: the member is in `leaf` and has no slot yet; leaf <= kMaxLeaf.
  void Insert(uint64_t hash, uint32_t leaf, const ZsetLeafHashes& hashes);

  // The member with this hash moved from old_leaf to new_leaf.
  // REQUIRES: a matching slot exists (the member was indexed in old_leaf).
  void Relocate(uint64_t hash, uint32_t old_leaf, uint32_t new_leaf);

  // Removes the slot of a member that was in `leaf`. REQUIRES: a matching slot exists.
  void Erase(uint64_t hash, uint32_t leaf);

  // Builds the index of a bulk load in one pass: the final number of segments is set first,
  // each segment allocated once at its size, so nothing splits, grows or is refreshed.
  // REQUIRES: the index is empty; every entry is (hash, leaf) of a distinct member.
  void BulkLoad(const std::vector<std::pair<uint64_t, uint32_t>>& entries);
  // Exchanges the contents of two indexes (a loader builds one on another thread).
  void Swap(ZsetMemberIndex& other) noexcept;

  // Shrinks every segment to the smallest allocation that holds it; returns bytes saved.
  size_t Shrink();

  // Bytes allocated for segments and the segment table.
  size_t MemoryUsage() const;

 private:
  static constexpr uint32_t kSpareBits = 6;
  // A typical segment (~50 slots) fits in this many bytes.
  static constexpr size_t kPrefetchBytes = 320;
  static constexpr uint32_t kFreshBits = kSpareBits - 1;

  struct SegmentHeader {
    uint16_t count;
    uint16_t capacity;
  };

  static size_t TagBytes(size_t capacity) { return (capacity + 15) & ~size_t{15}; }
  static size_t SegmentBytes(size_t capacity) {
    return sizeof(SegmentHeader) + TagBytes(capacity) + 4 * capacity;
  }
  static SegmentHeader* Header(uint8_t* s) { return reinterpret_cast<SegmentHeader*>(s); }
  static const SegmentHeader* Header(const uint8_t* s) {
    return reinterpret_cast<const SegmentHeader*>(s);
  }
  static uint8_t* Tags(uint8_t* s) { return s + sizeof(SegmentHeader); }
  static const uint8_t* Tags(const uint8_t* s) { return s + sizeof(SegmentHeader); }
  static uint32_t* Slots(uint8_t* s) {
    return reinterpret_cast<uint32_t*>(s + sizeof(SegmentHeader) + TagBytes(Header(s)->capacity));
  }
  static const uint32_t* Slots(const uint8_t* s) {
    return reinterpret_cast<const uint32_t*>(s + sizeof(SegmentHeader) +
                                             TagBytes(Header(s)->capacity));
  }

  static uint8_t Tag(uint64_t hash) { return static_cast<uint8_t>(hash >> 56); }
  static uint32_t FreshSpare(uint64_t hash, uint32_t depth) {
    return (uint32_t{1} << kFreshBits) | static_cast<uint32_t>((hash >> depth) & 31);
  }
  static uint32_t MakeSlot(uint32_t leaf, uint32_t spare) { return (leaf << kSpareBits) | spare; }
  static uint32_t SlotLeaf(uint32_t slot) { return slot >> kSpareBits; }
  static uint32_t SlotSpare(uint32_t slot) { return slot & ((1u << kSpareBits) - 1); }
  // Whether the spare bits stored in a slot agree with the hash.
  static bool SpareMatches(uint32_t spare, uint64_t hash, uint32_t depth);
  static uint32_t SpareValidBits(uint32_t spare);

  // 16-bit mask of the slots in tag block `block` whose tag is `tag`.
  static uint32_t MatchTags(const uint8_t* tags, size_t block, uint8_t tag);

  uint32_t Address(uint64_t hash) const;
  uint32_t Depth(uint32_t segment) const {
    return (segment < split_ || segment >= (uint32_t{1} << level_)) ? level_ + 1 : level_;
  }
  uint8_t* AllocateSegment(size_t min_capacity);
  void FreeSegment(uint8_t* segment);
  // Finds the slot to update for a member with this hash in `leaf` (the matching slot with the
  // most stored bits, which keeps invariant 1 when two members share tag and leaf).
  int PickSlot(const uint8_t* segment, uint64_t hash, uint32_t depth, uint32_t leaf) const;
  void SplitNext(const ZsetLeafHashes& hashes);
  // Undoes the last split: segment 2^L + p - 1 merges into p - 1.
  void MergeLast();
  void Refresh(uint8_t* segment, uint32_t number, uint32_t depth, const ZsetLeafHashes& hashes);
  void RemoveAt(uint32_t segment_number, int index);

  ZsetChunkedArray<uint8_t*> segments_;
  uint32_t level_ = 0;
  uint32_t split_ = 0;
  size_t size_ = 0;
  size_t slot_capacity_ = 0;
  size_t segment_bytes_ = 0;
  size_t refreshed_slots_ = 0;
};

template <typename Probe>
bool ZsetMemberIndex::Find(uint64_t hash, Probe&& probe) const {
  const uint32_t number = Address(hash);
  const uint8_t* segment = segments_[number];
  // A segment spans a few cache lines; fetch them together rather than tags, then slots.
  for (size_t line = 64; line < kPrefetchBytes; line += 64) __builtin_prefetch(segment + line);
  const uint32_t depth = Depth(number);
  const uint32_t count = Header(segment)->count;
  const uint8_t* tags = Tags(segment);
  const uint32_t* slots = Slots(segment);
  const uint8_t tag = Tag(hash);
  for (uint32_t block = 0; block * 16 < count; ++block) {
    uint32_t mask = MatchTags(tags, block, tag);
    const uint32_t remaining = count - block * 16;
    if (remaining < 16) mask &= (1u << remaining) - 1;
    while (mask != 0) {
      const uint32_t i = block * 16 + static_cast<uint32_t>(__builtin_ctz(mask));
      mask &= mask - 1;
      const uint32_t slot = slots[i];
      if (SpareMatches(SlotSpare(slot), hash, depth) && probe(SlotLeaf(slot))) return true;
    }
  }
  return false;
}

}  // namespace goblin
