// KeyTable: the keyspace's hash table. It maps binary keys to heap entries that carry their own
// key, at about 8 bytes per key, and never stops the world to grow or shrink.
//
// Where the bytes go (string workload, N = 1M, the whole per-key budget is 40 B of which the
// entry takes ~32): a slot is 7 bytes and 9 of them share a 64-byte cache line (7.11 B/slot).
// Each segment grows one bucket at a time, so its load stays between ~0.90 and 0.95:
// 7.11 / 0.93 = 7.6 B, plus the directory (16 B per 1-2 segments of ~200 keys) = 0.1 B.
// Total about 7.7 B/key at every N (measured 7.70-7.84 from 100K to 2M keys), against 9-18 B
// for a power-of-two table of 8-byte slots.
//
// The object itself is 48 bytes and a table of one segment holds, besides its buckets, one
// 16-byte directory entry: the state of a directory resize and the segments' depth histogram
// are allocated only while there is more than one segment. So a keyspace can afford many small
// tables: in cluster mode it keeps one per hash slot (keyspace/slot_tables.h).
//
// Shape: extendible hashing. A directory of 2^depth entries, indexed by the top `depth` bits of
// the 64-bit hash, points at segments; a segment owns the keys whose hash starts with its
// `local depth`-bit prefix and is a small open-addressing table of 64-byte buckets.
//
//   Directory entry (16 bytes; the 2^(depth - local depth) entries of a segment are copies):
//     word 0  [63..56 buckets nb][55..48 local depth][47..0 main bucket array address]
//     word 1  [63..48 key count ][47..0 tail bucket array address, 0 when there is none]
//             (only the first entry of a segment's range, its "canonical" entry, keeps the
//             count up to date; the copies' counts are stale and never read)
//
//   Segment: nb buckets. Buckets 0..nm-1 live in the main array, the rest (at most 7) in the
//   tail array, where nm = kMainBucketTable[nb]. Both arrays are exact jemalloc size classes
//   (64 * {1..8, 10, 12, 14, 16, 20, ...}), so a segment can grow by one bucket (1/16 to 1/32
//   of its size) without paying for allocator rounding.
//
//   Bucket (64 bytes, one cache line, 64-byte aligned):
//     +--------+--------+-- ... --+--------+-------+
//     | slot 0 | slot 1 |         | slot 8 | spill |   slot = 7 bytes, spill = 1 byte
//     +--------+--------+-- ... --+--------+-------+
//   Slot, a little-endian 56-bit word, 0 when empty:
//     [55..44 tag: the 12 hash bits that follow the segment's prefix][43..0 entry address >> 3]
//   A table whose slots carry a stamp (kStampBytes, 1 to 3) stores it little-endian right after
//   each word, and fits (63 / (7 + kStampBytes)) slots in a bucket: 6 of 10 bytes with a
//   3-byte stamp (the keyspace's access clock), about 11.5 B per key instead of 7.7.
//   Spill: how many entries are stored past this bucket although their probe passed through it
//   (saturates at 255, after which it only resets when the segment is rebuilt).
//
// A key's home bucket is (tag * nb) >> 12: it grows with the hash, so a segment stores its keys
// in hash order bucket by bucket. That gives three properties at once:
//   - Growing a segment by a bucket re-places its entries from their tags alone, without reading
//     a single entry (no cache misses, no hashing).
//   - SCAN can use the hash itself as its cursor: each call reports every entry whose hash lies
//     in one home bucket's hash range, and returns where that range ends. Entries never change
//     hash, so whatever splits, merges or rebuilds happen between calls, every entry present for
//     the whole scan falls in exactly one reported range.
//   - A lookup compares tags first: entries with the same home bucket share the tag's top
//     log2(nb) bits, and the other 7-8 bits screen out all but ~1 in 128-256 wrong entries.
// The cost is that a split or merge changes the prefix and thus every tag in the segment, so
// it reads each entry once to rehash its key (about once per doubling of the table, as in any
// table that does not store full hashes).
//
// Growth, shrink and their bound. Loads: a segment grows by one bucket above 0.95, splits at 32
// buckets into two halves rebuilt at 0.92, shrinks to 0.92 below 0.85, and merges with its buddy
// when together they hold <= 144 keys. So an Insert moves at most one segment (<= 576 slots) or
// splits one (<= 576 entries read), and an Erase rebuilds one or merges a few pairs of <= 144
// keys (a merge can enable the next level's). The directory doubles and halves incrementally
// (see Directory): each Insert/Erase copies at most 4 KB of it. Measured while growing to 10M
// keys, the slowest single Insert took 39 us.
//
// Invariants:
//   1. Every entry lives in exactly one segment: the one whose prefix matches its hash's top
//      `local depth` bits, reached through dir[hash >> (64 - depth)].
//   2. Its slot's tag equals the 12 hash bits following that prefix.
//   3. An entry with home bucket h stored in bucket b (b != h) implies spill >= 1 on every
//      bucket from h to b - 1, cyclically: the probe walks while spill != 0, so it finds it.
//   4. A segment's count is stored in its canonical directory entry, is the number of non-empty
//      slots, and stays below its capacity (9 * nb), so a probe always meets a free slot.
//   5. Every segment's local depth is <= the directory's depth (which may be one more than
//      needed: halving waits for a resize in progress to finish).
//
// Assumptions: x86-64 user-space addresses (< 2^47) and entries aligned to 8 bytes, so an
// address fits in 44 bits; Insert checks both and aborts rather than corrupt the table.
// Not thread-safe: one thread owns the table, like the rest of the keyspace.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/hashing.h"

namespace goblin {

namespace key_table_internal {

inline constexpr size_t kSlotWordBytes = 7;  // tag and address; a stamp follows
inline constexpr size_t kBucketBytes = 64;
inline constexpr size_t kSpillOffset = 63;
inline constexpr uint8_t kSpillSaturated = 255;
inline constexpr int kTagBits = 12;
inline constexpr int kTagShift = 44;
inline constexpr uint64_t kAddressMask = (uint64_t{1} << kTagShift) - 1;
inline constexpr uint64_t kSlotMask = (uint64_t{1} << 56) - 1;
inline constexpr uint64_t kPointerMask = (uint64_t{1} << 48) - 1;

// A segment that must grow past kSplitBuckets splits instead; only at kMaxDepth (where a
// split would run out of tag bits) may it grow on to kMaxBuckets.
inline constexpr uint32_t kSplitBuckets = 32;
inline constexpr uint32_t kMaxBuckets = 64;
inline constexpr uint32_t kMaxDepth = 64 - 16;
// Load thresholds, in hundredths.
inline constexpr uint32_t kGrowAbove = 95;
inline constexpr uint32_t kRebuildAt = 92;
inline constexpr uint32_t kShrinkBelow = 85;

// kMainBucketTable[nb]: the largest bucket count <= nb whose byte size is a jemalloc size
// class; the remaining nb - main (< 8) buckets go to the tail array, itself a size class.
inline constexpr std::array<uint8_t, kMaxBuckets + 1> kMainBucketTable = [] {
  constexpr uint32_t kClasses[] = {1,  2,  3,  4,  5,  6,  7,  8,  10, 12,
                                   14, 16, 20, 24, 28, 32, 40, 48, 56, 64};
  std::array<uint8_t, kMaxBuckets + 1> table{};
  for (uint32_t nb = 0; nb <= kMaxBuckets; ++nb) {
    for (uint32_t c : kClasses) {
      if (c <= nb) table[nb] = static_cast<uint8_t>(c);
    }
  }
  return table;
}();

// Where slots sit in a bucket when each carries kStampBytes of stamp after its word: 9 slots of
// 7 bytes without a stamp, 6 of 10 with a 3-byte one.
template <size_t kStampBytes>
struct BucketLayout {
  static_assert(kStampBytes <= 3);
  static constexpr size_t kSlotBytes = kSlotWordBytes + kStampBytes;
  static constexpr uint32_t kSlotsPerBucket = (kBucketBytes - 1) / kSlotBytes;
  // Buddies merge when together they hold at most this many keys: half of what makes a split,
  // so a workload hovering around one size cannot make a segment split and merge in turn.
  static constexpr uint32_t kMergeCount = kSplitBuckets * kSlotsPerBucket / 2;

  // Buckets a segment needs to hold `count` keys at the rebuild load (at least one).
  static constexpr uint32_t BucketsFor(uint32_t count) {
    constexpr uint32_t kPerBucket = kSlotsPerBucket * kRebuildAt;  // hundredths of a key
    uint32_t nb = (count * 100 + kPerBucket - 1) / kPerBucket;
    return nb == 0 ? 1 : nb;
  }

  static uint64_t LoadSlot(const uint8_t* bucket, uint32_t i) {
    uint64_t word;
    std::memcpy(&word, bucket + kSlotBytes * i, sizeof(word));
    return word & kSlotMask;
  }
  // Rewrites slot i's word and keeps the byte after it (the stamp's, the next slot's or the
  // spill).
  static void StoreSlot(uint8_t* bucket, uint32_t i, uint64_t slot) {
    uint64_t word;
    std::memcpy(&word, bucket + kSlotBytes * i, sizeof(word));
    word = (word & ~kSlotMask) | slot;
    std::memcpy(bucket + kSlotBytes * i, &word, sizeof(word));
  }
  static uint32_t LoadStamp(const uint8_t* bucket, uint32_t i) {
    uint32_t stamp = 0;
    std::memcpy(&stamp, bucket + kSlotBytes * i + kSlotWordBytes, kStampBytes);
    return stamp;
  }
  static void StoreStamp(uint8_t* bucket, uint32_t i, uint32_t stamp) {
    std::memcpy(bucket + kSlotBytes * i + kSlotWordBytes, &stamp, kStampBytes);
  }
};

inline uint64_t SlotTag(uint64_t slot) { return slot >> kTagShift; }
inline uint64_t MakeSlot(uint64_t tag, uint64_t address_bits) {
  return (tag << kTagShift) | address_bits;
}

// The 12 hash bits after a `depth`-bit prefix.
inline uint64_t TagOf(uint64_t hash, uint32_t depth) { return (hash << depth) >> (64 - kTagBits); }
inline uint32_t HomeOf(uint64_t tag, uint32_t nb) {
  return static_cast<uint32_t>((tag * nb) >> kTagBits);
}
// The smallest tag whose home is bucket b: ceil(b * 4096 / nb).
inline uint64_t FirstTagOf(uint32_t b, uint32_t nb) {
  return ((uint64_t{b} << kTagBits) + nb - 1) / nb;
}

// A directory entry; see the layout at the top of the file.
struct DirEntry {
  uint64_t layout;  // [63..56 nb][55..48 local depth][47..0 main array]
  uint64_t tail;    // [63..48 count][47..0 tail array]
};

// The directory: 2^depth entries. Resizing it is the one step whose work grows with the table
// (16 bytes per segment: 1 MB at 10M keys), so it is incremental. The new array is filled from
// the old one chunk by chunk: a few chunks per Insert/Erase (Step), and at once any chunk about
// to be written (Mutable); until then, reads of a chunk go to the old array. Both arrays hold
// the same segments, so only writes need care: they all go to the new array.
//
// The resize's own state lives on the heap while a resize is in progress, so an idle directory
// is 24 bytes: a keyspace in cluster mode keeps one table per hash slot, 16384 of them.
class Directory {
 public:
  static constexpr uint32_t kChunkBits = 6;      // 64 entries, 1 KB
  static constexpr size_t kStepChunks = 4;       // copied per Step: 4 KB
  static constexpr size_t kAtOnceEntries = 256;  // resizes up to this size finish immediately

  Directory() = default;
  ~Directory() { Release(); }
  Directory(const Directory&) = delete;
  Directory& operator=(const Directory&) = delete;
  Directory(Directory&& other) noexcept { Steal(&other); }
  Directory& operator=(Directory&& other) noexcept {
    if (this != &other) {
      Release();
      Steal(&other);
    }
    return *this;
  }

  bool allocated() const { return entries_ != nullptr; }
  uint32_t depth() const { return depth_; }
  size_t size() const { return size_t{1} << depth_; }
  bool resizing() const { return resize_ != nullptr; }

  const DirEntry& Get(size_t i) const {
    if (resize_ == nullptr || Filled(i >> chunk_bits_)) return entries_[i];
    return resize_->old[Source(i)];
  }
  DirEntry& Mutable(size_t i) {
    if (resize_ != nullptr && !Filled(i >> chunk_bits_)) Fill(i >> chunk_bits_);
    return entries_[i];
  }

  // A directory of 2^depth entries. REQUIRES: !allocated().
  void Init(uint32_t depth = 0) {
    depth_ = static_cast<uint8_t>(depth);
    entries_ = new DirEntry[size()]();
  }

  // Starts moving to 2^depth entries (depth = depth() +- 1); reads and writes use the new
  // depth from now on. REQUIRES: !resizing(); when shrinking, no segment is deeper than depth.
  void StartResize(uint32_t depth) {
    assert(!resizing() && (depth == depth_ + 1u || depth + 1u == depth_));
    resize_ = std::make_unique<Resize>();
    resize_->old = entries_;
    resize_->old_depth = depth_;
    depth_ = static_cast<uint8_t>(depth);
    entries_ = new DirEntry[size()];
    size_t chunks = ((size() - 1) >> chunk_bits_) + 1;
    resize_->filled.assign((chunks + 63) / 64, 0);
    resize_->unfilled = chunks;
    if (size() <= at_once_entries_) Finish();
  }

  // Copies a few more chunks of a resize in progress.
  void Step() { Step(step_chunks_); }

  void Finish() {
    while (resize_ != nullptr) Step(1);
  }

  // Tests shrink these to keep resizes in progress as long as possible. REQUIRES: !resizing().
  void SetResizeParameters(size_t step_chunks, uint32_t chunk_bits, size_t at_once_entries) {
    assert(!resizing());
    step_chunks_ = static_cast<uint16_t>(step_chunks);
    chunk_bits_ = static_cast<uint8_t>(chunk_bits);
    at_once_entries_ = static_cast<uint32_t>(at_once_entries);
  }

  size_t AllocatedBytes() const {
    size_t bytes = entries_ == nullptr ? 0 : sizeof(DirEntry) << depth_;
    if (resize_ != nullptr) {
      bytes += sizeof(Resize) + (sizeof(DirEntry) << resize_->old_depth) +
               resize_->filled.capacity() * 8;
    }
    return bytes;
  }

  void Release() {
    delete[] entries_;
    if (resize_ != nullptr) delete[] resize_->old;
    entries_ = nullptr;
    resize_.reset();
    depth_ = 0;
  }

 private:
  // A resize in progress.
  struct Resize {
    DirEntry* old = nullptr;  // the previous array, 2^old_depth entries
    uint32_t old_depth = 0;
    std::vector<uint64_t> filled;  // one bit per chunk of entries_
    size_t unfilled = 0;
    size_t next_chunk = 0;  // chunks before it are all filled
  };

  void Step(size_t chunks) {
    for (size_t n = 0; n < chunks && resize_ != nullptr; ++n) {
      while (Filled(resize_->next_chunk)) ++resize_->next_chunk;
      Fill(resize_->next_chunk);
    }
  }

  bool Filled(size_t chunk) const { return (resize_->filled[chunk >> 6] >> (chunk & 63)) & 1; }
  // Entry i of the new array is a copy of this entry of the old one.
  size_t Source(size_t i) const { return depth_ > resize_->old_depth ? i >> 1 : i << 1; }

  void Fill(size_t chunk) {
    size_t first = chunk << chunk_bits_;
    size_t last = std::min(first + (size_t{1} << chunk_bits_), size());
    for (size_t i = first; i < last; ++i) entries_[i] = resize_->old[Source(i)];
    resize_->filled[chunk >> 6] |= uint64_t{1} << (chunk & 63);
    if (--resize_->unfilled == 0) {
      delete[] resize_->old;
      resize_.reset();
    }
  }

  void Steal(Directory* other) {
    entries_ = std::exchange(other->entries_, nullptr);
    resize_ = std::move(other->resize_);
    depth_ = std::exchange(other->depth_, 0);
    step_chunks_ = other->step_chunks_;
    chunk_bits_ = other->chunk_bits_;
    at_once_entries_ = other->at_once_entries_;
  }

  DirEntry* entries_ = nullptr;     // 2^depth_ entries
  std::unique_ptr<Resize> resize_;  // while resizing
  uint8_t depth_ = 0;
  uint8_t chunk_bits_ = kChunkBits;
  uint16_t step_chunks_ = kStepChunks;
  uint32_t at_once_entries_ = kAtOnceEntries;
};

inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace key_table_internal

// Entry: any type the caller allocates (8-byte aligned). KeyOf: a stateless functor with
// `std::string_view operator()(const Entry*) const` giving the entry's key. The table stores
// pointers only: it never allocates, copies or frees entries. kStampBytes (0 to 3): a small
// number the table keeps beside each entry's address and moves with it, its "stamp" (the
// keyspace keeps its access clock there: writing it touches the cache line the lookup has
// just read, and it survives the entry's reallocations).
template <typename Entry, typename KeyOf, size_t kStampBytes = 0>
class KeyTable {
  using Layout = key_table_internal::BucketLayout<kStampBytes>;
  static constexpr size_t kSlotBytes = Layout::kSlotBytes;
  static constexpr uint32_t kSlotsPerBucket = Layout::kSlotsPerBucket;
  static constexpr uint32_t kMergeCount = Layout::kMergeCount;
  static constexpr uint32_t BucketsFor(uint32_t count) { return Layout::BucketsFor(count); }
  static uint64_t LoadSlot(const uint8_t* bucket, uint32_t i) {
    return Layout::LoadSlot(bucket, i);
  }
  static void StoreSlot(uint8_t* bucket, uint32_t i, uint64_t slot) {
    Layout::StoreSlot(bucket, i, slot);
  }
  static uint32_t LoadStamp(const uint8_t* bucket, uint32_t i) {
    return Layout::LoadStamp(bucket, i);
  }
  static void StoreStamp(uint8_t* bucket, uint32_t i, uint32_t stamp) {
    Layout::StoreStamp(bucket, i, stamp);
  }

 public:
  // A found slot, so a caller that reallocates an entry (same key) can store it back without a
  // second lookup. Valid until the next Insert, Erase or Clear.
  class Slot {
   public:
    Slot() = default;
    explicit operator bool() const { return bucket_ != nullptr; }
    // REQUIRES: *this is non-empty.
    Entry* entry() const { return Decode(LoadSlot(bucket_, index_)); }
    // REQUIRES: *this is non-empty.
    uint32_t stamp() const { return LoadStamp(bucket_, index_); }
    void set_stamp(uint32_t stamp) { StoreStamp(bucket_, index_, stamp); }
    // Stores `e` in place of the current entry, which may already be freed (as after a
    // realloc). REQUIRES: *this is non-empty and e's key equals the current entry's key (the tag
    // is kept).
    void Replace(Entry* e) {
      using namespace key_table_internal;
      uint64_t slot = LoadSlot(bucket_, index_);
      assert(TagOf(HashBytes(KeyOf{}(e)), depth_) == SlotTag(slot));
      StoreSlot(bucket_, index_, MakeSlot(SlotTag(slot), AddressBits(e)));
    }

   private:
    friend class KeyTable;
    Slot(uint8_t* bucket, uint32_t index, uint32_t depth)
        : bucket_(bucket), index_(index), depth_(depth) {}
    uint8_t* bucket_ = nullptr;
    uint32_t index_ = 0;
    uint32_t depth_ = 0;  // The segment's local depth, for checking the key's tag.
  };

  KeyTable() = default;
  // Frees the table's own memory, not the entries: call Clear(deleter) first to free them.
  ~KeyTable() { Release(); }

  KeyTable(const KeyTable&) = delete;
  KeyTable& operator=(const KeyTable&) = delete;
  KeyTable(KeyTable&& other) noexcept { Steal(&other); }
  KeyTable& operator=(KeyTable&& other) noexcept {
    if (this != &other) {
      Release();
      Steal(&other);
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // The entry whose key is `key`, or nullptr.
  Entry* Find(std::string_view key) const {
    Position p = Locate(key);
    return p.bucket == nullptr ? nullptr : Decode(LoadSlot(p.bucket, p.slot));
  }

  // Starts loading the bucket that a lookup or insertion of key reads first, so that a loader
  // issuing it a few keys ahead finds it in cache.
  void Prefetch(std::string_view key) const {
    if (!dir_.allocated()) return;
    const uint64_t hash = HashBytes(key);
    const Segment seg = SegmentAt(DirIndex(hash));
    const uint64_t tag = key_table_internal::TagOf(hash, seg.depth);
    __builtin_prefetch(seg.Bucket(key_table_internal::HomeOf(tag, seg.nb)));
  }

  // The step after Prefetch, once the home bucket has had time to arrive: starts loading the
  // entries in it whose tag matches key's (its own, and ~1 in 128-256 others), so that the
  // lookup finds the key to compare in cache. A key stored past its home bucket is not
  // reached; the lookup then pays one miss, as without prefetching.
  void PrefetchEntry(std::string_view key) const {
    using namespace key_table_internal;
    if (size_ == 0) return;
    const uint64_t hash = HashBytes(key);
    const Segment seg = SegmentAt(DirIndex(hash));
    const uint64_t tag = TagOf(hash, seg.depth);
    const uint8_t* bucket = seg.Bucket(HomeOf(tag, seg.nb));
    for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
      const uint64_t slot = LoadSlot(bucket, i);
      if (SlotTag(slot) == tag && (slot & kAddressMask) != 0) __builtin_prefetch(Decode(slot));
    }
  }

  // The slot holding `key`'s entry; empty when absent.
  Slot FindSlot(std::string_view key) {
    Position p = Locate(key);
    return p.bucket == nullptr ? Slot() : Slot(p.bucket, p.slot, p.depth);
  }

  // Adds e with its stamp. May rebuild one segment (or split it, doubling the directory if
  // needed). REQUIRES: no entry with e's key is present; e is 8-byte aligned.
  void Insert(Entry* e, uint32_t stamp = 0) {
    using namespace key_table_internal;
    uint64_t address = AddressBits(e);
    std::string_view key = KeyOf{}(e);
    assert(Find(key) == nullptr);
    uint64_t hash = HashBytes(key);
    if (!dir_.allocated()) InitDirectory();
    size_t index = DirIndex(hash);
    Segment seg = SegmentAt(index);
    size_t canonical = Canonical(index, seg.depth);
    uint32_t count = CountAt(canonical);
    if ((count + 1) * 100 > seg.Capacity() * kGrowAbove) {
      Grow(index, seg, count);
      index = DirIndex(hash);
      seg = SegmentAt(index);
      canonical = Canonical(index, seg.depth);
      count = CountAt(canonical);
    }
    Place(seg, TagOf(hash, seg.depth), address, stamp);
    SetCount(canonical, count + 1);
    ++size_;
    if (dir_.resizing()) dir_.Step();
  }

  // Sizes an empty table for about `count` keys at once: one segment per ~200 keys, each with
  // the buckets its share needs at the rebuild load, so inserting them rebuilds only the few
  // segments their hashes fill past that and splits none (a split reads every entry it moves:
  // a cache miss each). A snapshot load knows its key count. REQUIRES: empty().
  void Reserve(size_t count) {
    using namespace key_table_internal;
    assert(empty());
    constexpr size_t kKeysPerSegment = 200;
    uint32_t depth = 0;
    while ((count >> depth) > kKeysPerSegment && depth < kMaxDepth) ++depth;
    if (depth == 0) return;  // one segment: growing it is cheap
    Release();
    CountSegmentsByDepth();
    dir_.Init(depth);
    const uint32_t nb = BucketsFor(static_cast<uint32_t>((count >> depth) + 1));
    for (size_t i = 0; i < dir_.size(); ++i) Publish(i, 1, AllocateSegment(nb, depth), 0);
  }

  // Removes and returns the entry whose key is `key` (the caller frees it), or nullptr. May
  // shrink one segment or merge it with its buddy, and start halving the directory.
  Entry* Erase(std::string_view key) {
    using namespace key_table_internal;
    if (size_ == 0) return nullptr;
    uint64_t hash = HashBytes(key);
    size_t index = DirIndex(hash);
    Segment seg = SegmentAt(index);
    Position p = Probe(seg, TagOf(hash, seg.depth), key);
    if (p.bucket == nullptr) return nullptr;
    Entry* e = Decode(LoadSlot(p.bucket, p.slot));
    StoreSlot(p.bucket, p.slot, 0);
    StoreStamp(p.bucket, p.slot, 0);
    // Invariant 3: the entry no longer passes through the buckets between its home and p.
    for (uint32_t b = p.home; b != p.stored; b = Next(b, seg.nb)) {
      uint8_t* spill = seg.Bucket(b) + kSpillOffset;
      if (*spill != kSpillSaturated) --*spill;
    }
    size_t canonical = Canonical(index, seg.depth);
    SetCount(canonical, CountAt(canonical) - 1);
    --size_;
    Shrink(index);
    if (dir_.resizing()) {
      dir_.Step();
    } else if (dir_.depth() > 0 && (*depth_histogram_)[dir_.depth()] == 0) {
      dir_.StartResize(dir_.depth() - 1);  // No segment uses the directory's last bit.
    }
    if (depth_histogram_ != nullptr && dir_.depth() == 0 && !dir_.resizing()) {
      depth_histogram_.reset();  // Back to one segment.
    }
    return e;
  }

  // One step of a SCAN: calls fn(Entry*) for every entry whose hash lies in one home bucket's
  // hash range starting at `cursor`, and returns the cursor of the next range (0 after the
  // last). Start with cursor 0. Every entry present from the first call to the one that returns
  // 0 is reported, whatever grows or shrinks in between, and no key is reported twice (the
  // ranges are disjoint). One call visits one home bucket's probe chain (~9 slots), so the
  // caller loops until it has COUNT entries. REQUIRES: fn does not modify the table.
  template <class F>
  uint64_t Scan(uint64_t cursor, F&& fn) const {
    using namespace key_table_internal;
    if (size_ == 0) return 0;
    Segment seg = SegmentAt(DirIndex(cursor));
    const uint32_t depth = seg.depth;
    const uint64_t cursor_tag = TagOf(cursor, depth);
    // Hash bits below the tag: nonzero only for a cursor from before a split or merge, when an
    // entry whose tag equals the cursor's may lie on either side of it.
    const bool cursor_inside_tag = depth + kTagBits < 64 && (cursor << (depth + kTagBits)) != 0;
    const uint32_t home = HomeOf(cursor_tag, seg.nb);
    uint32_t b = home;
    for (uint32_t step = 0; step < seg.nb; ++step) {
      const uint8_t* bucket = seg.Bucket(b);
      for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
        uint64_t slot = LoadSlot(bucket, i);
        if (slot == 0) continue;
        uint64_t tag = SlotTag(slot);
        if (HomeOf(tag, seg.nb) != home || tag < cursor_tag) continue;
        Entry* e = Decode(slot);
        if (tag == cursor_tag && cursor_inside_tag && HashBytes(KeyOf{}(e)) < cursor) continue;
        fn(e);
      }
      if (bucket[kSpillOffset] == 0) break;
      b = Next(b, seg.nb);
    }
    const uint64_t prefix_base = depth == 0 ? 0 : (cursor >> (64 - depth)) << (64 - depth);
    if (home + 1 < seg.nb) {
      return prefix_base | (FirstTagOf(home + 1, seg.nb) << (64 - kTagBits - depth));
    }
    // Past the segment's last bucket: the next prefix, or 0 when this was the last one.
    if (depth == 0) return 0;
    return prefix_base + (uint64_t{1} << (64 - depth));
  }

  // A random entry, nullptr when the table is empty. Picks a directory entry and a slot from
  // random_bits, retrying empty slots, so an entry's chance is inversely proportional to its
  // segment's load; loads stay within 0.85-0.95, so this is within about 10% of uniform.
  Entry* Random(uint64_t random_bits) const {
    Slot slot = RandomSlot(random_bits);
    return slot ? slot.entry() : nullptr;
  }
  // The slot of such an entry (its stamp included); empty when the table is empty.
  Slot RandomSlot(uint64_t random_bits) const {
    using namespace key_table_internal;
    if (size_ == 0) return Slot();
    uint64_t state = random_bits;
    for (int attempt = 0; attempt < 64; ++attempt) {
      uint64_t r = SplitMix64(&state);
      Segment seg = SegmentAt(DirIndex(r));
      uint32_t entry_index = static_cast<uint32_t>(((r & 0xffffffffu) * seg.Capacity()) >> 32);
      uint8_t* bucket = seg.Bucket(entry_index / kSlotsPerBucket);
      if (LoadSlot(bucket, entry_index % kSlotsPerBucket) != 0) {
        return Slot(bucket, entry_index % kSlotsPerBucket, seg.depth);
      }
    }
    // Very sparse table: walk from a random directory entry to the first entry.
    size_t start = DirIndex(SplitMix64(&state));
    size_t dir_size = dir_.size();
    for (size_t n = 0; n < dir_size; ++n) {
      Segment seg = SegmentAt((start + n) & (dir_size - 1));
      for (uint32_t b = 0; b < seg.nb; ++b) {
        for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
          if (LoadSlot(seg.Bucket(b), i) != 0) return Slot(seg.Bucket(b), i, seg.depth);
        }
      }
    }
    return Slot();  // Unreachable while invariant 4 holds.
  }

  // Calls fn(Slot) on up to n entries stored next to each other from a random place (hash order
  // is random with respect to the keys, so they are a random sample, at the cache misses of a
  // bucket or two instead of one per entry: Redis's dictGetSomeKeys). Fewer than n only when the
  // table holds fewer. REQUIRES: fn does not insert or erase.
  template <class F>
  void Sample(uint64_t random_bits, size_t n, F&& fn) const {
    using namespace key_table_internal;
    n = std::min(n, size_);
    if (n == 0) return;
    uint64_t state = random_bits;
    const uint64_t r = SplitMix64(&state);
    size_t index = DirIndex(r);
    Segment seg = SegmentAt(index);
    index = Canonical(index, seg.depth);
    uint32_t entry_index = static_cast<uint32_t>(((r & 0xffffffffu) * seg.Capacity()) >> 32);
    for (size_t found = 0; found < n;) {
      if (entry_index == seg.Capacity()) {  // on to the next segment, wrapping around
        index = (index + RangeSize(seg.depth)) & (dir_.size() - 1);
        seg = SegmentAt(index);
        entry_index = 0;
        continue;
      }
      uint8_t* bucket = seg.Bucket(entry_index / kSlotsPerBucket);
      const uint32_t i = entry_index % kSlotsPerBucket;
      if (LoadSlot(bucket, i) != 0) {
        fn(Slot(bucket, i, seg.depth));
        ++found;
      }
      ++entry_index;
    }
  }

  // Calls f(Entry*) once per entry, in no useful order. REQUIRES: f does not modify the table.
  template <class F>
  void ForEach(F&& f) const {
    ForEachSegment([&](const Segment& seg) {
      for (uint32_t b = 0; b < seg.nb; ++b) {
        const uint8_t* bucket = seg.Bucket(b);
        for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
          uint64_t slot = LoadSlot(bucket, i);
          if (slot != 0) f(Decode(slot));
        }
      }
    });
  }

  // Calls f(Entry*) on entries, in no useful order, until f returns false; returns whether f
  // saw them all. A caller wanting n entries reads only the buckets up to the n-th.
  // REQUIRES: f does not modify the table.
  template <class F>
  bool ForEachWhile(F&& f) const {
    if (size_ == 0) return true;
    for (size_t index = 0; index < dir_.size();) {
      const Segment seg = SegmentAt(index);
      for (uint32_t b = 0; b < seg.nb; ++b) {
        const uint8_t* bucket = seg.Bucket(b);
        for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
          const uint64_t slot = LoadSlot(bucket, i);
          if (slot != 0 && !f(Decode(slot))) return false;
        }
      }
      index += RangeSize(seg.depth);
    }
    return true;
  }

  // The same with each entry's stamp: f(Entry*, uint32_t).
  template <class F>
  void ForEachWithStamp(F&& f) const {
    ForEachSegment([&](const Segment& seg) {
      for (uint32_t b = 0; b < seg.nb; ++b) {
        const uint8_t* bucket = seg.Bucket(b);
        for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
          uint64_t slot = LoadSlot(bucket, i);
          if (slot != 0) f(Decode(slot), LoadStamp(bucket, i));
        }
      }
    });
  }

  // Calls deleter(Entry*) on every entry and leaves an empty table holding no memory.
  template <class F>
  void Clear(F&& deleter) {
    ForEach(deleter);
    Release();
  }

  // Heap bytes held by the table itself (directory, buckets and, once it has more than one
  // segment, the depth histogram), not by the entries. The buckets and the directory are exact
  // jemalloc size classes, so this is within a few dozen bytes of what the allocator charges.
  size_t AllocatedBytes() const {
    return segment_bytes_ + dir_.AllocatedBytes() +
           (depth_histogram_ != nullptr ? sizeof(DepthHistogram) : 0);
  }

  // Directory resizes copy step_chunks chunks of 2^chunk_bits entries per Insert/Erase, and
  // finish at once up to at_once_entries (defaults 4, 6, 256). Tests pass (0, 0, 0) so resizes
  // stay in progress while the table changes under them. REQUIRES: called on an empty table.
  void SetDirectoryResizeForTesting(size_t step_chunks, uint32_t chunk_bits,
                                    size_t at_once_entries) {
    dir_.SetResizeParameters(step_chunks, chunk_bits, at_once_entries);
  }

  // Checks invariants 1-5 by reading every entry. Returns "" when they hold, else what broke.
  // For tests: it costs a hash per entry.
  std::string Validate() const;

 private:
  using DirEntry = key_table_internal::DirEntry;

  // A segment's fields unpacked from its directory entry.
  struct Segment {
    uint8_t* main = nullptr;
    uint8_t* tail = nullptr;
    uint32_t nb = 0;
    uint32_t main_buckets = 0;
    uint32_t depth = 0;

    uint32_t Capacity() const { return nb * kSlotsPerBucket; }
    uint8_t* Bucket(uint32_t b) const {
      return b < main_buckets ? main + key_table_internal::kBucketBytes * b
                              : tail + key_table_internal::kBucketBytes * (b - main_buckets);
    }
  };

  // Where a key was found: its bucket and slot, its home bucket and the bucket index it is
  // stored in, and its segment's depth (bucket == nullptr when absent).
  struct Position {
    uint8_t* bucket = nullptr;
    uint32_t slot = 0;
    uint32_t home = 0;
    uint32_t stored = 0;
    uint32_t depth = 0;  // The segment's local depth.
  };

  static Entry* Decode(uint64_t slot) {
    return reinterpret_cast<Entry*>((slot & key_table_internal::kAddressMask) << 3);
  }
  static uint64_t AddressBits(const Entry* e) {
    uint64_t address = reinterpret_cast<uintptr_t>(e);
    if ((address & 7) != 0 || (address >> 47) != 0) {
      std::fprintf(stderr, "KeyTable: entry address %p is not an 8-aligned x86-64 user address\n",
                   static_cast<const void*>(e));
      std::abort();
    }
    return address >> 3;
  }
  static uint32_t Next(uint32_t b, uint32_t nb) { return b + 1 == nb ? 0 : b + 1; }

  size_t DirIndex(uint64_t hash) const {
    return dir_.depth() == 0 ? 0 : static_cast<size_t>(hash >> (64 - dir_.depth()));
  }
  // The first directory entry of the range that the segment at `index` occupies.
  size_t Canonical(size_t index, uint32_t depth) const {
    uint32_t shift = dir_.depth() - depth;
    return (index >> shift) << shift;
  }
  Segment SegmentAt(size_t index) const {
    const DirEntry& d = dir_.Get(index);
    Segment seg;
    seg.main = reinterpret_cast<uint8_t*>(d.layout & key_table_internal::kPointerMask);
    seg.tail = reinterpret_cast<uint8_t*>(d.tail & key_table_internal::kPointerMask);
    seg.nb = static_cast<uint32_t>(d.layout >> 56);
    seg.depth = static_cast<uint32_t>((d.layout >> 48) & 0xff);
    seg.main_buckets = key_table_internal::kMainBucketTable[seg.nb];
    return seg;
  }
  uint32_t CountAt(size_t canonical) const {
    return static_cast<uint32_t>(dir_.Get(canonical).tail >> 48);
  }
  void SetCount(size_t canonical, uint32_t count) {
    DirEntry& d = dir_.Mutable(canonical);
    d.tail = (d.tail & key_table_internal::kPointerMask) | (uint64_t{count} << 48);
  }

  Position Locate(std::string_view key) const {
    if (size_ == 0) return Position();
    uint64_t hash = HashBytes(key);
    Segment seg = SegmentAt(DirIndex(hash));
    return Probe(seg, key_table_internal::TagOf(hash, seg.depth), key);
  }

  // Walks the probe chain from the tag's home bucket (invariant 3) comparing tags, and keys
  // only where tags match.
  static Position Probe(const Segment& seg, uint64_t tag, std::string_view key) {
    using namespace key_table_internal;
    const uint32_t home = HomeOf(tag, seg.nb);
    uint32_t b = home;
    for (uint32_t step = 0; step < seg.nb; ++step) {
      uint8_t* bucket = seg.Bucket(b);
      for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
        uint64_t slot = LoadSlot(bucket, i);
        if (SlotTag(slot) == tag && (slot & kAddressMask) != 0 && KeyOf{}(Decode(slot)) == key) {
          return Position{bucket, i, home, b, seg.depth};
        }
      }
      if (bucket[kSpillOffset] == 0) break;
      b = Next(b, seg.nb);
    }
    return Position();
  }

  // Stores a slot in the first free place of its probe chain, counting the spill of every
  // full bucket it passes (invariant 3). REQUIRES: the segment has a free slot.
  static void Place(const Segment& seg, uint64_t tag, uint64_t address_bits, uint32_t stamp) {
    using namespace key_table_internal;
    uint32_t b = HomeOf(tag, seg.nb);
    for (uint32_t step = 0; step < seg.nb; ++step) {
      uint8_t* bucket = seg.Bucket(b);
      for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
        if (LoadSlot(bucket, i) == 0) {
          StoreSlot(bucket, i, MakeSlot(tag, address_bits));
          StoreStamp(bucket, i, stamp);
          return;
        }
      }
      if (bucket[kSpillOffset] != kSpillSaturated) ++bucket[kSpillOffset];
      b = Next(b, seg.nb);
    }
    assert(false && "KeyTable::Place: segment full");
  }

  // Place for a freshly allocated (zeroed) segment that nothing else writes while it fills: it
  // tracks each bucket's fill instead of reading slots back. Rebuilds are the price of growing
  // a bucket at a time, so they get this faster path.
  class Filler {
   public:
    explicit Filler(const Segment& seg) : nb_(seg.nb) {
      for (uint32_t b = 0; b < nb_; ++b) buckets_[b] = seg.Bucket(b);
    }
    // REQUIRES: fewer slots added than the segment's capacity.
    void Add(uint64_t tag, uint64_t address_bits, uint32_t stamp) {
      using namespace key_table_internal;
      uint32_t b = HomeOf(tag, nb_);
      while (fill_[b] == kSlotsPerBucket) {
        if (buckets_[b][kSpillOffset] != kSpillSaturated) ++buckets_[b][kSpillOffset];
        b = Next(b, nb_);
      }
      // An 8-byte store: its last byte lands on the stamp, written next, on the next slot, still
      // empty, or for the last slot on the spill byte, which is still 0 because spill only
      // grows once the bucket is full.
      uint64_t slot = MakeSlot(tag, address_bits);
      std::memcpy(buckets_[b] + kSlotBytes * fill_[b], &slot, sizeof(slot));
      StoreStamp(buckets_[b], fill_[b], stamp);
      ++fill_[b];
    }

   private:
    uint32_t nb_;
    std::array<uint8_t*, key_table_internal::kMaxBuckets> buckets_;
    std::array<uint8_t, key_table_internal::kMaxBuckets> fill_{};
  };

  Segment AllocateSegment(uint32_t nb, uint32_t depth) {
    using namespace key_table_internal;
    Segment seg;
    seg.nb = nb;
    seg.depth = depth;
    seg.main_buckets = kMainBucketTable[nb];
    seg.main = AllocateBuckets(seg.main_buckets);
    if (nb > seg.main_buckets) seg.tail = AllocateBuckets(nb - seg.main_buckets);
    if (depth_histogram_ != nullptr) ++(*depth_histogram_)[depth];
    return seg;
  }
  void FreeSegment(const Segment& seg) {
    FreeBuckets(seg.main, seg.main_buckets);
    if (seg.tail != nullptr) FreeBuckets(seg.tail, seg.nb - seg.main_buckets);
    if (depth_histogram_ != nullptr) --(*depth_histogram_)[seg.depth];
  }
  uint8_t* AllocateBuckets(uint32_t n) {
    size_t bytes = key_table_internal::kBucketBytes * n;
    auto* p = static_cast<uint8_t*>(
        ::operator new (bytes, std::align_val_t{key_table_internal::kBucketBytes}));
    std::memset(p, 0, bytes);
    segment_bytes_ += bytes;
    return p;
  }
  void FreeBuckets(uint8_t* p, uint32_t n) {
    size_t bytes = key_table_internal::kBucketBytes * n;
    ::operator delete (p, bytes, std::align_val_t{key_table_internal::kBucketBytes});
    segment_bytes_ -= bytes;
  }

  // Points directory entries [first, first + n) at seg, with count in each (the canonical one
  // is the one that counts).
  void Publish(size_t first, size_t n, const Segment& seg, uint32_t count) {
    DirEntry d;
    d.layout = reinterpret_cast<uintptr_t>(seg.main) | (uint64_t{seg.depth} << 48) |
               (uint64_t{seg.nb} << 56);
    d.tail = reinterpret_cast<uintptr_t>(seg.tail) | (uint64_t{count} << 48);
    for (size_t i = first; i < first + n; ++i) dir_.Mutable(i) = d;
  }
  size_t RangeSize(uint32_t depth) const { return size_t{1} << (dir_.depth() - depth); }

  void InitDirectory() {
    dir_.Init();
    Publish(0, 1, AllocateSegment(1, 0), 0);
  }

  // Makes room for one more key in the segment at `index`.
  void Grow(size_t index, const Segment& seg, uint32_t count) {
    using namespace key_table_internal;
    // A split that needs a deeper directory while it is still resizing waits: the segment
    // grows past kSplitBuckets instead, and splits on a later insert.
    const bool wait_for_directory = seg.depth == dir_.depth() && dir_.resizing();
    const uint32_t nb = std::max(seg.nb + 1, BucketsFor(count + 1));
    if (seg.nb < kSplitBuckets || seg.depth >= kMaxDepth ||
        (wait_for_directory && nb <= kMaxBuckets)) {
      if (nb > kMaxBuckets) {
        std::fprintf(stderr, "KeyTable: over %u keys share a 48-bit hash prefix\n", count);
        std::abort();
      }
      Rebuild(index, seg, count, nb);
    } else {
      if (wait_for_directory) dir_.Finish();  // Only if a segment filled 64 buckets meanwhile.
      Split(index, seg, count);
    }
  }

  // Re-places a segment's slots into a new one of nb buckets, from their tags alone.
  void Rebuild(size_t index, const Segment& old, uint32_t count, uint32_t nb) {
    using namespace key_table_internal;
    Segment seg = AllocateSegment(nb, old.depth);
    Filler filler(seg);
    for (uint32_t b = 0; b < old.nb; ++b) {
      const uint8_t* bucket = old.Bucket(b);
      for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
        uint64_t slot = LoadSlot(bucket, i);
        if (slot != 0) filler.Add(SlotTag(slot), slot & kAddressMask, LoadStamp(bucket, i));
      }
    }
    Publish(Canonical(index, old.depth), RangeSize(old.depth), seg, count);
    FreeSegment(old);
  }

  // Reads every entry of the given segments and rehashes its key, for a split or merge.
  // Prefetches a few entries ahead: the entries are scattered over the heap, and their cache
  // misses overlap only if they are requested before they are needed.
  size_t CollectHashes(const Segment* segs, int n, Entry** entries, uint32_t* stamps,
                       uint64_t* hashes) const {
    using namespace key_table_internal;
    size_t total = 0;
    for (int s = 0; s < n; ++s) {
      for (uint32_t b = 0; b < segs[s].nb; ++b) {
        const uint8_t* bucket = segs[s].Bucket(b);
        for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
          uint64_t slot = LoadSlot(bucket, i);
          if (slot == 0) continue;
          stamps[total] = LoadStamp(bucket, i);
          entries[total++] = Decode(slot);
        }
      }
    }
    constexpr size_t kAhead = 8;
    for (size_t i = 0; i < total && i < kAhead; ++i) __builtin_prefetch(entries[i]);
    for (size_t i = 0; i < total; ++i) {
      if (i + kAhead < total) __builtin_prefetch(entries[i + kAhead]);
      hashes[i] = HashBytes(KeyOf{}(entries[i]));
    }
    return total;
  }

  // Splits a full segment into two halves by the first hash bit after its prefix.
  void Split(size_t index, const Segment& old, uint32_t count) {
    using namespace key_table_internal;
    if (depth_histogram_ == nullptr) CountSegmentsByDepth();
    if (old.depth == dir_.depth()) {
      dir_.StartResize(dir_.depth() + 1);
      index *= 2;
    }
    Entry* entries[kMaxBuckets * kSlotsPerBucket];
    uint32_t stamps[kMaxBuckets * kSlotsPerBucket];
    uint64_t hashes[kMaxBuckets * kSlotsPerBucket];
    size_t total = CollectHashes(&old, 1, entries, stamps, hashes);
    assert(total == count);
    const uint32_t depth = old.depth + 1;
    const uint64_t upper_bit = uint64_t{1} << (63 - old.depth);
    uint32_t upper_count = 0;
    for (size_t i = 0; i < total; ++i) upper_count += (hashes[i] & upper_bit) != 0;
    const uint32_t lower_count = count - upper_count;
    Segment lower = AllocateSegment(BucketsFor(lower_count), depth);
    Segment upper = AllocateSegment(BucketsFor(upper_count), depth);
    Filler lower_filler(lower), upper_filler(upper);
    for (size_t i = 0; i < total; ++i) {
      ((hashes[i] & upper_bit) ? upper_filler : lower_filler)
          .Add(TagOf(hashes[i], depth), AddressBits(entries[i]), stamps[i]);
    }
    size_t first = Canonical(index, old.depth);
    size_t half = RangeSize(depth);
    Publish(first, half, lower, lower_count);
    Publish(first + half, half, upper, upper_count);
    FreeSegment(old);
  }

  // After an erase from the segment at `index`: merge it with its buddy while the two fit in
  // one, else shrink it in place when its load has fallen below kShrinkBelow.
  void Shrink(size_t index) {
    using namespace key_table_internal;
    for (;;) {
      Segment seg = SegmentAt(index);
      uint32_t count = CountAt(Canonical(index, seg.depth));
      if (seg.depth > 0) {
        size_t buddy_index = index ^ (size_t{1} << (dir_.depth() - seg.depth));
        Segment buddy = SegmentAt(buddy_index);
        uint32_t buddy_count = CountAt(Canonical(buddy_index, buddy.depth));
        if (buddy.depth == seg.depth && count + buddy_count <= kMergeCount) {
          index = Merge(index, seg, buddy, count + buddy_count);
          continue;
        }
      }
      if (count * 100 < seg.Capacity() * kShrinkBelow && BucketsFor(count) < seg.nb) {
        Rebuild(index, seg, count, BucketsFor(count));
      }
      return;
    }
  }

  // Merges two buddies into their parent segment; returns a directory index of the result.
  size_t Merge(size_t index, const Segment& seg, const Segment& buddy, uint32_t count) {
    using namespace key_table_internal;
    Entry* entries[kMergeCount];
    uint32_t stamps[kMergeCount];
    uint64_t hashes[kMergeCount];
    const Segment both[2] = {seg, buddy};
    size_t total = CollectHashes(both, 2, entries, stamps, hashes);
    assert(total == count);
    const uint32_t depth = seg.depth - 1;
    Segment parent = AllocateSegment(BucketsFor(count), depth);
    Filler filler(parent);
    for (size_t i = 0; i < total; ++i) {
      filler.Add(TagOf(hashes[i], depth), AddressBits(entries[i]), stamps[i]);
    }
    Publish(Canonical(index, depth), RangeSize(depth), parent, count);
    FreeSegment(seg);
    FreeSegment(buddy);
    return index;
  }

  // Starts keeping the depth histogram, before the table gets its second segment.
  // REQUIRES: depth_histogram_ == nullptr, so the table holds at most one segment, of depth 0.
  void CountSegmentsByDepth() {
    depth_histogram_ = std::make_unique<DepthHistogram>();
    (*depth_histogram_)[0] = dir_.allocated() ? 1 : 0;
  }

  template <class F>
  void ForEachSegment(F&& f) const {
    if (!dir_.allocated()) return;
    for (size_t i = 0; i < dir_.size();) {
      Segment seg = SegmentAt(i);
      f(seg);
      i += RangeSize(seg.depth);
    }
  }

  void Release() {
    if (!dir_.allocated()) return;
    for (size_t i = 0; i < dir_.size();) {
      Segment seg = SegmentAt(i);
      i += RangeSize(seg.depth);
      FreeSegment(seg);
    }
    dir_.Release();
    depth_histogram_.reset();
    size_ = 0;
  }

  void Steal(KeyTable* other) {
    dir_ = std::move(other->dir_);
    size_ = std::exchange(other->size_, 0);
    segment_bytes_ = std::exchange(other->segment_bytes_, 0);
    depth_histogram_ = std::move(other->depth_histogram_);
  }

  key_table_internal::Directory dir_;  // unallocated before the first Insert
  size_t size_ = 0;
  size_t segment_bytes_ = 0;
  // Segments per local depth, so the directory halves once no segment needs its last bit.
  // Kept only while there is more than one segment (null means the directory, if allocated,
  // is the one entry of one depth-0 segment), so a small table is 48 bytes (see
  // AllocatedBytes).
  using DepthHistogram = std::array<uint32_t, key_table_internal::kMaxDepth + 1>;
  std::unique_ptr<DepthHistogram> depth_histogram_;
};

template <typename Entry, typename KeyOf, size_t kStampBytes>
std::string KeyTable<Entry, KeyOf, kStampBytes>::Validate() const {
  using namespace key_table_internal;
  if (!dir_.allocated()) return size_ == 0 && segment_bytes_ == 0 ? "" : "no directory";
  std::string error;
  auto fail = [&](const std::string& what) {
    if (error.empty()) error = what;
  };
  size_t dir_size = dir_.size();
  size_t total = 0;
  size_t bytes = 0;
  std::array<uint32_t, kMaxDepth + 1> histogram{};
  for (size_t first = 0; first < dir_size;) {
    Segment seg = SegmentAt(first);
    if (seg.depth > dir_.depth()) return "segment deeper than the directory";
    size_t n = RangeSize(seg.depth);
    if (first % n != 0) return "segment range not aligned";
    for (size_t i = first; i < first + n; ++i) {
      if ((dir_.Get(i).layout != dir_.Get(first).layout) ||
          ((dir_.Get(i).tail ^ dir_.Get(first).tail) & kPointerMask) != 0) {
        return "directory copies disagree";
      }
    }
    ++histogram[seg.depth];
    bytes += kBucketBytes * seg.nb;
    if (seg.nb == 0 || seg.nb > kMaxBuckets) return "bad bucket count";
    // Recount the spill each bucket should have (invariant 3) and check the stored one covers.
    std::array<uint32_t, kMaxBuckets> passes{};
    uint32_t count = 0;
    for (uint32_t b = 0; b < seg.nb; ++b) {
      const uint8_t* bucket = seg.Bucket(b);
      for (uint32_t i = 0; i < kSlotsPerBucket; ++i) {
        uint64_t slot = LoadSlot(bucket, i);
        if (slot == 0) continue;
        ++count;
        Entry* e = Decode(slot);
        uint64_t hash = HashBytes(KeyOf{}(e));
        if (DirIndex(hash) < first || DirIndex(hash) >= first + n) fail("entry in wrong segment");
        if (TagOf(hash, seg.depth) != SlotTag(slot)) fail("tag mismatch");
        for (uint32_t h = HomeOf(SlotTag(slot), seg.nb); h != b; h = Next(h, seg.nb)) {
          ++passes[h];
        }
      }
    }
    for (uint32_t b = 0; b < seg.nb; ++b) {
      uint8_t spill = seg.Bucket(b)[kSpillOffset];
      if (spill != kSpillSaturated && spill != passes[b]) fail("spill count wrong");
    }
    if (count != CountAt(first)) fail("segment count wrong");
    if (count >= seg.Capacity()) fail("segment full");
    total += count;
    first += n;
  }
  if (total != size_) fail("size wrong");
  if (depth_histogram_ != nullptr ? histogram != *depth_histogram_
                                  : dir_.depth() != 0 || dir_.resizing() || histogram[0] != 1) {
    fail("depth histogram wrong");
  }
  if (bytes != segment_bytes_) fail("segment bytes wrong");
  return error;
}

}  // namespace goblin
