// EntryIndex: the key -> entry index of a large hash or set (paged_table.h). It holds no key
// bytes: a slot is 12 hash bits and the entry's 32-bit reference, in 5 bytes.
//
// Where the bytes go (per element, any N >= 0.5M): a 5-byte slot in segments filled to 98.7%
// (blocks are jemalloc size classes topped up by a small tail block, see below), plus 8 bytes
// of header and 16 of segment table per ~256 elements: 5.17 B measured. An open-addressing
// table of the same slots would sit at 0.75-0.95 load (5.3-6.7 B); one of 8-byte pointers at
// 10+ B.
//
// An EntryRef (32 bits) names an entry: [31..28 chain][27..0 offset in the chain's pages].
// The chain is the entry's key hash bits 0..3 (entry_pages.h), so a slot stores only the
// offset; the chain follows from the slot's segment number and tag (below).
//
//   slot: tag byte (in the segment's tag array) + word (u32 in its word array)
//     tag (12 bits) = key hash bits [depth, depth + 12)
//     tag byte      = tag bits 0..7, compared 16 at a time with SSE2
//     word          = [31..28 tag bits 8..11][27..0 entry offset]
//
//   segment main block (one malloc of a jemalloc size class):
//   +-------+----------+----------+--------+--------------------------+---------------------+
//   | count | main cap | tail cap | unused | tags [main cap], pad to 4 | words [main cap]    |
//   | u16   | u16      | u16      | u16    |                          | u32 each            |
//   +-------+----------+----------+--------+--------------------------+---------------------+
//   segment tail block (optional, small size class):
//   +--------------------------+---------------------+
//   | tags [tail cap], pad to 4 | words [tail cap]    |
//   +--------------------------+---------------------+
//   Live slots are 0..count-1, in no order: slot i < main cap in the main block, the rest in the
//   tail. A lookup compares every tag of one segment (128-512, 256 on average: 16 SSE2 compares
//   over 4 cache lines), then the 4 tag bits in the word: ~6% of lookups meet one false
//   candidate (256 slots / 4096 tag values).
//
// Why a tail: size classes come four per doubling, so a segment grown class by class would be
// ~10% empty on average. The main block is the largest class not above the need and the tail
// the smallest class above the remainder (classes there are 16-32 bytes apart): ~2% empty.
//
// Segments by linear hashing (Litwin), addressed by the low hash bits: with level L and split
// pointer p, hash h lives in segment a = h mod 2^L, or h mod 2^(L+1) when a < p. Past
// kTargetPerSegment elements per segment on average, segment p splits into p and p + 2^L (its
// entries are re-read to learn hash bit L and their new tags: 256-512 entries, prefetched,
// 30-55 us at 10M elements); below half of that, the last split is undone (no entry reads: the
// merged tag is the old one shifted, plus the address bit). The segment table is chunked, so
// no step of growth or shrinkage moves more than one or two segments (a few KB), or while the
// first chunk doubles toward its 1024 segments, that chunk (at most 8 KB). A full
// segment grows by replacing its tail block (<= 256 B) or, once a step up of the main block's
// size class holds it all, both blocks (<= 2.6 KB).
//
// SCAN: positions are bit-reversed hashes, pos(h) = reverse(h). A segment of depth d owns all
// positions whose top d bits are reverse(a), one interval, and a slot knows the top d + 12
// bits of its entry's position. Scan(cursor) reports, segment by segment in position order,
// the entries at positions >= cursor, stops at a boundary between known positions, and
// returns that boundary. Splits and merges change which segment owns a position but never the
// position itself, so every entry present for a whole scan lies in exactly one reported
// interval and is reported exactly once.
//
// Invariants:
//  1. Every entry has exactly one slot, in segment Address(hash), with tag hash bits
//     [Depth(segment), +12) and the entry's offset; (segment, tag, offset) is unique.
//  2. Segment s has depth L + 1 when s < p or s >= 2^L, else L; segments number 2^L + p.
//  3. count <= main cap + tail cap; tail cap == 0 when there is no tail block; every cap >= 8
//     (the 16-byte tag loads stay inside the block).
//
// Not thread-safe; the single command thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace goblin {

using EntryRef = uint32_t;

inline constexpr uint32_t kEntryOffsetBits = 28;
inline constexpr uint32_t kEntryOffsetMask = (uint32_t{1} << kEntryOffsetBits) - 1;
inline constexpr uint32_t kChainCount = 16;

inline uint32_t ChainOfHash(uint64_t hash) {
  return static_cast<uint32_t>(hash & (kChainCount - 1));
}
inline uint32_t ChainOfRef(EntryRef ref) { return ref >> kEntryOffsetBits; }
inline uint32_t OffsetOfRef(EntryRef ref) { return ref & kEntryOffsetMask; }
inline EntryRef MakeEntryRef(uint32_t chain, uint32_t offset) {
  return (chain << kEntryOffsetBits) | offset;
}

// Reads entries for the index when it needs more hash bits than the slots hold.
class EntryIndexOwner {
 public:
  virtual ~EntryIndexOwner() = default;
  // The hash of the key of the entry at ref.
  virtual uint64_t HashAt(EntryRef ref) const = 0;
  // Starts loading that entry (a split reads a few hundred in a row).
  virtual void PrefetchAt(EntryRef ref) const = 0;
};

class EntryIndex {
 public:
  // Average elements per segment before the next split.
  static constexpr uint32_t kTargetPerSegment = 256;

  explicit EntryIndex(const EntryIndexOwner* owner);
  ~EntryIndex();
  EntryIndex(const EntryIndex&) = delete;
  EntryIndex& operator=(const EntryIndex&) = delete;

  size_t size() const { return size_; }
  size_t segment_count() const { return table_.size(); }
  size_t slot_capacity() const { return slot_capacity_; }

  // Calls probe(EntryRef) for each entry whose slot matches the hash until it returns true;
  // returns whether one did.
  template <typename Probe>
  bool Find(uint64_t hash, Probe&& probe) const;

  // Adds a slot. May grow the segment and split one segment (reading its entries).
  // REQUIRES: no slot for ref yet; ChainOfRef(ref) == ChainOfHash(hash).
  void Insert(uint64_t hash, EntryRef ref);
  // Removes ref's slot. May shrink its segment and merge the last two. REQUIRES: present.
  void Erase(uint64_t hash, EntryRef ref);
  // Points ref's slot at the entry's new place (same chain). REQUIRES: old_ref present.
  void Replace(uint64_t hash, EntryRef old_ref, EntryRef new_ref);

  // Appends to *out every entry at positions [cursor, next) and returns next, or 0 when the
  // scan is complete; next is chosen so that at least `count` entries are reported when the
  // table has them. Start with cursor 0. See the top of the file for the guarantee.
  uint64_t Scan(uint64_t cursor, size_t count, std::vector<EntryRef>* out) const;

  // A random entry, each with probability within a few percent of 1/size().
  // REQUIRES: size() > 0.
  EntryRef Random(uint64_t* random_state) const;

  // Calls fn(EntryRef) for every slot, segment by segment.
  template <typename Fn>
  void ForEach(Fn&& fn) const;

  // Builds the index of a fresh load in one pass, each segment allocated once at its final size.
  // REQUIRES: the index is empty; entries are (hash, ref) of distinct entries.
  void BulkLoad(const std::vector<std::pair<uint64_t, EntryRef>>& entries);

  // Bytes allocated: segments and the segment table.
  size_t MemoryUsage() const;

  // Checks invariants 1-3 (reading every entry); "" when they hold.
  std::string Validate() const;

 private:
  struct Segment {
    uint8_t* main = nullptr;
    uint8_t* tail = nullptr;
  };
  struct Header {
    uint16_t count;
    uint16_t main_capacity;
    uint16_t tail_capacity;
    uint16_t unused;
  };
  // Pointers into one segment's arrays.
  struct View {
    uint8_t* main_tags;
    uint32_t* main_words;
    uint8_t* tail_tags;
    uint32_t* tail_words;
    uint32_t count;
    uint32_t main_capacity;
    uint32_t tail_capacity;

    uint32_t capacity() const { return main_capacity + tail_capacity; }
    uint8_t& tag(uint32_t i) const {
      return i < main_capacity ? main_tags[i] : tail_tags[i - main_capacity];
    }
    uint32_t& word(uint32_t i) const {
      return i < main_capacity ? main_words[i] : tail_words[i - main_capacity];
    }
  };
  // A segment table that grows a chunk at a time, so growth never copies more than a chunk.
  // The first chunk starts at one segment and doubles up to kChunk: a table of a few segments
  // (a hash or set just past its small form) costs bytes, not 16 KB.
  class SegmentTable {
   public:
    static constexpr size_t kChunkBits = 10;
    static constexpr size_t kChunk = size_t{1} << kChunkBits;
    size_t size() const { return size_; }
    Segment& operator[](size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
    const Segment& operator[](size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
    void push_back(const Segment& s) {
      if (size_ < kChunk && size_ == first_capacity_) {
        const size_t capacity = first_capacity_ == 0 ? 1 : 2 * first_capacity_;
        auto first = std::make_unique<Segment[]>(capacity);
        for (size_t i = 0; i < size_; ++i) first[i] = chunks_[0][i];
        if (chunks_.empty()) {
          chunks_.push_back(std::move(first));
        } else {
          chunks_[0] = std::move(first);
        }
        first_capacity_ = capacity;
      } else if ((size_ >> kChunkBits) == chunks_.size()) {
        chunks_.push_back(std::make_unique<Segment[]>(kChunk));
      }
      (*this)[size_++] = s;
    }
    void pop_back() {
      --size_;
      if (size_ >= kChunk && (size_ & (kChunk - 1)) == 0 &&
          (size_ >> kChunkBits) + 1 == chunks_.size()) {
        chunks_.pop_back();
      }
    }
    size_t MemoryUsage() const {
      const size_t full_chunks = chunks_.empty() ? 0 : chunks_.size() - 1;
      return (first_capacity_ + full_chunks * kChunk) * sizeof(Segment) +
             chunks_.capacity() * sizeof(void*);
    }

   private:
    std::vector<std::unique_ptr<Segment[]>> chunks_;
    size_t first_capacity_ = 0;  // segments chunks_[0] holds (kChunk once full)
    size_t size_ = 0;
  };

  static constexpr size_t kHeaderBytes = sizeof(Header);
  static constexpr uint32_t kMinCapacity = 8;
  static constexpr uint32_t kMaxCapacity = 65535;
  static constexpr uint32_t kTagMask = 0xFFF;
  // Blocks up to this size are single size classes; above, main + tail.
  static constexpr size_t kSingleBlockBytes = 256;

  static size_t TagBytes(size_t capacity) { return (capacity + 3) & ~size_t{3}; }
  static size_t MainBytes(size_t capacity) {
    return kHeaderBytes + TagBytes(capacity) + 4 * capacity;
  }
  static size_t TailBytes(size_t capacity) { return TagBytes(capacity) + 4 * capacity; }
  static uint32_t CapacityIn(size_t bytes, size_t header);
  static Header* HeaderOf(uint8_t* main) { return reinterpret_cast<Header*>(main); }
  static const Header* HeaderOf(const uint8_t* main) {
    return reinterpret_cast<const Header*>(main);
  }
  static View ViewOf(const Segment& seg);

  static uint32_t TagOf(uint64_t hash, uint32_t depth) {
    return static_cast<uint32_t>(hash >> depth) & kTagMask;
  }
  static uint32_t Word(uint32_t tag, EntryRef ref) { return ((tag >> 8) << 28) | OffsetOfRef(ref); }
  // The chain of the entry in segment s (depth d) whose slot has this tag.
  static uint32_t ChainOfSlot(uint64_t s, uint32_t depth, uint32_t tag) {
    return ChainOfHash(s | (static_cast<uint64_t>(tag) << depth));
  }
  static uint32_t TagOfSlot(const View& v, uint32_t i) {
    return v.tag(i) | ((v.word(i) >> 28) << 8);
  }
  static uint32_t MatchMask(const uint8_t* tags, uint8_t tag);

  uint64_t Address(uint64_t hash) const {
    const uint64_t a = hash & ((uint64_t{1} << level_) - 1);
    return a >= split_ ? a : hash & ((uint64_t{2} << level_) - 1);
  }
  uint32_t Depth(uint64_t s) const {
    return (s < split_ || s >= (uint64_t{1} << level_)) ? level_ + 1 : level_;
  }

  // A new empty segment with room for at least `need` slots (see "Why a tail").
  Segment Allocate(uint32_t need);
  void Free(const Segment& seg);
  // Index of the slot in s holding ref with this tag, or -1.
  int FindSlot(const View& v, uint32_t tag, EntryRef ref) const;
  // Moves the slots of `from` into a new segment of room for `need`; frees `from`.
  Segment Reallocate(const Segment& from, uint32_t need);
  void Grow(uint64_t s);
  void SplitNext();
  void MergeLast();

  const EntryIndexOwner* owner_;
  SegmentTable table_;
  uint32_t level_ = 0;
  uint64_t split_ = 0;
  size_t size_ = 0;
  size_t slot_capacity_ = 0;
  size_t segment_bytes_ = 0;
};

inline uint32_t EntryIndex::MatchMask(const uint8_t* tags, uint8_t tag) {
#if defined(__SSE2__)
  const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags));
  return static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(chunk, _mm_set1_epi8(static_cast<char>(tag)))));
#else
  uint32_t mask = 0;
  for (int i = 0; i < 16; ++i) mask |= static_cast<uint32_t>(tags[i] == tag) << i;
  return mask;
#endif
}

inline EntryIndex::View EntryIndex::ViewOf(const Segment& seg) {
  const Header* h = HeaderOf(seg.main);
  View v;
  v.count = h->count;
  v.main_capacity = h->main_capacity;
  v.tail_capacity = h->tail_capacity;
  v.main_tags = seg.main + kHeaderBytes;
  v.main_words = reinterpret_cast<uint32_t*>(seg.main + kHeaderBytes + TagBytes(v.main_capacity));
  v.tail_tags = seg.tail;
  v.tail_words = seg.tail == nullptr
                     ? nullptr
                     : reinterpret_cast<uint32_t*>(seg.tail + TagBytes(v.tail_capacity));
  return v;
}

template <typename Probe>
bool EntryIndex::Find(uint64_t hash, Probe&& probe) const {
  const uint64_t s = Address(hash);
  const View v = ViewOf(table_[s]);
  const uint32_t tag = TagOf(hash, Depth(s));
  const uint8_t tag_byte = static_cast<uint8_t>(tag);
  const uint32_t high = tag >> 8;
  const uint32_t chain = ChainOfHash(hash);
  const uint32_t in_main = v.count < v.main_capacity ? v.count : v.main_capacity;
  for (int part = 0; part < 2; ++part) {
    const uint8_t* tags = part == 0 ? v.main_tags : v.tail_tags;
    const uint32_t* words = part == 0 ? v.main_words : v.tail_words;
    const uint32_t n = part == 0 ? in_main : v.count - in_main;
    for (uint32_t b = 0; b < n; b += 16) {
      uint32_t mask = MatchMask(tags + b, tag_byte);
      if (n - b < 16) mask &= (1u << (n - b)) - 1;
      while (mask != 0) {
        const uint32_t w = words[b + static_cast<uint32_t>(__builtin_ctz(mask))];
        mask &= mask - 1;
        if ((w >> 28) == high && probe(MakeEntryRef(chain, w & kEntryOffsetMask))) return true;
      }
    }
  }
  return false;
}

template <typename Fn>
void EntryIndex::ForEach(Fn&& fn) const {
  for (size_t s = 0; s < table_.size(); ++s) {
    const View v = ViewOf(table_[s]);
    const uint32_t depth = Depth(s);
    for (uint32_t i = 0; i < v.count; ++i) {
      const uint32_t w = v.word(i);
      fn(MakeEntryRef(ChainOfSlot(s, depth, TagOfSlot(v, i)), w & kEntryOffsetMask));
    }
  }
}

}  // namespace goblin
