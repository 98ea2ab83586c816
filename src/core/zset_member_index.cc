#include "core/zset_member_index.h"

#include <malloc.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace goblin {

ZsetMemberIndex::ZsetMemberIndex() { segments_.push_back(AllocateSegment(4)); }

ZsetMemberIndex::~ZsetMemberIndex() {
  for (size_t i = 0; i < segments_.size(); ++i) std::free(segments_[i]);
}

uint32_t ZsetMemberIndex::SpareValidBits(uint32_t spare) {
  return static_cast<uint32_t>(std::bit_width(spare)) - 1;
}

bool ZsetMemberIndex::SpareMatches(uint32_t spare, uint64_t hash, uint32_t depth) {
  const uint32_t k = SpareValidBits(spare);
  const uint32_t mask = (1u << k) - 1;
  return (spare & mask) == (static_cast<uint32_t>(hash >> depth) & mask);
}

uint32_t ZsetMemberIndex::MatchTags(const uint8_t* tags, size_t block, uint8_t tag) {
#if defined(__SSE2__)
  const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tags + block * 16));
  return static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(chunk, _mm_set1_epi8(static_cast<char>(tag)))));
#else
  uint32_t mask = 0;
  for (int i = 0; i < 16; ++i) mask |= static_cast<uint32_t>(tags[block * 16 + i] == tag) << i;
  return mask;
#endif
}

uint32_t ZsetMemberIndex::Address(uint64_t hash) const {
  const uint64_t low = hash & ((uint64_t{1} << level_) - 1);
  if (low >= split_) return static_cast<uint32_t>(low);
  return static_cast<uint32_t>(hash & ((uint64_t{2} << level_) - 1));
}

uint8_t* ZsetMemberIndex::AllocateSegment(size_t min_capacity) {
  min_capacity = std::max<size_t>(min_capacity, 1);
  auto* segment = static_cast<uint8_t*>(std::malloc(SegmentBytes(min_capacity)));
  if (segment == nullptr) std::abort();
  // Take every byte the allocator rounded up to: the size class is paid for anyway.
  const size_t usable = malloc_usable_size(segment);
  size_t capacity = std::min<size_t>((usable - sizeof(SegmentHeader)) / 5, 65535);
  while (SegmentBytes(capacity) > usable) --capacity;
  Header(segment)->count = 0;
  Header(segment)->capacity = static_cast<uint16_t>(capacity);
  std::memset(Tags(segment), 0, TagBytes(capacity));
  slot_capacity_ += capacity;
  segment_bytes_ += usable;
  return segment;
}

void ZsetMemberIndex::FreeSegment(uint8_t* segment) {
  slot_capacity_ -= Header(segment)->capacity;
  segment_bytes_ -= malloc_usable_size(segment);
  std::free(segment);
}

void ZsetMemberIndex::Insert(uint64_t hash, uint32_t leaf, const ZsetLeafHashes& hashes) {
  assert(leaf <= kMaxLeaf);
  const uint32_t number = Address(hash);
  uint8_t* segment = segments_[number];
  SegmentHeader* header = Header(segment);
  if (header->count == header->capacity) {
    // Grow by about an eighth: a segment is at most a few hundred bytes, so the copy is short,
    // and small steps keep the slack small.
    const size_t count = header->count;
    uint8_t* grown = AllocateSegment(count + std::max<size_t>(4, count / 8));
    std::memcpy(Tags(grown), Tags(segment), count);
    std::memcpy(Slots(grown), Slots(segment), 4 * count);
    Header(grown)->count = static_cast<uint16_t>(count);
    FreeSegment(segment);
    segments_[number] = segment = grown;
    header = Header(segment);
  }
  const uint32_t i = header->count++;
  Tags(segment)[i] = Tag(hash);
  Slots(segment)[i] = MakeSlot(leaf, FreshSpare(hash, Depth(number)));
  ++size_;
  // The new slot is in place before any split, so a refresh that rescans its leaf finds the
  // member and the slot together.
  if (size_ > kTargetPerSegment * segments_.size()) SplitNext(hashes);
}

int ZsetMemberIndex::PickSlot(const uint8_t* segment, uint64_t hash, uint32_t depth,
                              uint32_t leaf) const {
  const uint32_t count = Header(segment)->count;
  const uint8_t* tags = Tags(segment);
  const uint32_t* slots = Slots(segment);
  const uint8_t tag = Tag(hash);
  int best = -1;
  uint32_t best_bits = 0;
  for (uint32_t block = 0; block * 16 < count; ++block) {
    uint32_t mask = MatchTags(tags, block, tag);
    const uint32_t remaining = count - block * 16;
    if (remaining < 16) mask &= (1u << remaining) - 1;
    while (mask != 0) {
      const uint32_t i = block * 16 + static_cast<uint32_t>(__builtin_ctz(mask));
      mask &= mask - 1;
      const uint32_t slot = slots[i];
      if (SlotLeaf(slot) != leaf || !SpareMatches(SlotSpare(slot), hash, depth)) continue;
      const uint32_t bits = SpareValidBits(SlotSpare(slot));
      if (best < 0 || bits > best_bits) {
        best = static_cast<int>(i);
        best_bits = bits;
      }
    }
  }
  return best;
}

void ZsetMemberIndex::Relocate(uint64_t hash, uint32_t old_leaf, uint32_t new_leaf) {
  const uint32_t number = Address(hash);
  uint8_t* segment = segments_[number];
  const uint32_t depth = Depth(number);
  const int i = PickSlot(segment, hash, depth, old_leaf);
  assert(i >= 0);
  Slots(segment)[i] = MakeSlot(new_leaf, FreshSpare(hash, depth));
}

void ZsetMemberIndex::RemoveAt(uint32_t number, int index) {
  uint8_t* segment = segments_[number];
  SegmentHeader* header = Header(segment);
  const uint32_t last = --header->count;
  Tags(segment)[index] = Tags(segment)[last];
  Slots(segment)[index] = Slots(segment)[last];
  --size_;
  if (header->capacity >= 16 && header->count < header->capacity / 2) {
    const size_t count = header->count;
    uint8_t* shrunk = AllocateSegment(count + count / 8);
    std::memcpy(Tags(shrunk), Tags(segment), count);
    std::memcpy(Slots(shrunk), Slots(segment), 4 * count);
    Header(shrunk)->count = static_cast<uint16_t>(count);
    FreeSegment(segment);
    segments_[number] = shrunk;
  }
}

void ZsetMemberIndex::Erase(uint64_t hash, uint32_t leaf) {
  const uint32_t number = Address(hash);
  const int i = PickSlot(segments_[number], hash, Depth(number), leaf);
  assert(i >= 0);
  RemoveAt(number, i);
  if (segments_.size() > 1 && size_ < kTargetPerSegment * segments_.size() / 2) MergeLast();
}

void ZsetMemberIndex::MergeLast() {
  if (split_ == 0) {
    --level_;
    split_ = uint32_t{1} << level_;
  }
  const uint32_t high_number = static_cast<uint32_t>(segments_.size() - 1);
  const uint32_t low_number = split_ - 1;
  uint8_t* low = segments_[low_number];
  uint8_t* high = segments_[high_number];
  const uint32_t low_count = Header(low)->count;
  const uint32_t high_count = Header(high)->count;
  const uint32_t count = low_count + high_count;
  uint8_t* merged = AllocateSegment(count + count / 8 + 1);
  uint32_t j = 0;
  for (uint8_t* from : {low, high}) {
    const uint32_t bit = from == high ? 1 : 0;
    for (uint32_t i = 0; i < Header(from)->count; ++i, ++j) {
      // The bit that told the two apart becomes the lowest stored bit again; when the field is
      // full its highest bit is dropped (it is recomputed if a later split needs it).
      const uint32_t spare = SlotSpare(Slots(from)[i]);
      uint32_t k = SpareValidBits(spare);
      uint32_t bits = ((spare & ((1u << k) - 1)) << 1) | bit;
      k = std::min(k + 1, kFreshBits);
      bits &= (1u << k) - 1;
      Tags(merged)[j] = Tags(from)[i];
      Slots(merged)[j] = MakeSlot(SlotLeaf(Slots(from)[i]), (1u << k) | bits);
    }
  }
  Header(merged)->count = static_cast<uint16_t>(count);
  FreeSegment(low);
  FreeSegment(high);
  segments_[low_number] = merged;
  segments_.pop_back();
  --split_;
}

void ZsetMemberIndex::Refresh(uint8_t* segment, uint32_t number, uint32_t depth,
                              const ZsetLeafHashes& hashes) {
  const uint32_t count = Header(segment)->count;
  uint8_t* tags = Tags(segment);
  uint32_t* slots = Slots(segment);
  const uint64_t low_mask = (uint64_t{1} << depth) - 1;
  std::vector<uint64_t> leaf_hashes;
  std::vector<uint64_t> matching;
  for (uint32_t i = 0; i < count; ++i) {
    if (SpareValidBits(SlotSpare(slots[i])) != 0) continue;
    // Slots with the same leaf and tag are interchangeable, so the whole group is rewritten
    // from the members of that leaf which hash to this segment with this tag.
    const uint32_t leaf = SlotLeaf(slots[i]);
    const uint8_t tag = tags[i];
    leaf_hashes.clear();
    hashes.HashesInLeaf(leaf, &leaf_hashes);
    matching.clear();
    for (uint64_t h : leaf_hashes) {
      if (Tag(h) == tag && (h & low_mask) == number) matching.push_back(h);
    }
    size_t next = 0;
    for (uint32_t j = 0; j < count; ++j) {
      if (tags[j] != tag || SlotLeaf(slots[j]) != leaf) continue;
      assert(next < matching.size());
      slots[j] = MakeSlot(leaf, FreshSpare(matching[next++], depth));
      ++refreshed_slots_;
    }
    assert(next == matching.size());
  }
}

void ZsetMemberIndex::SplitNext(const ZsetLeafHashes& hashes) {
  const uint32_t number = split_;
  const uint32_t depth = level_;
  uint8_t* segment = segments_[number];
  Refresh(segment, number, depth, hashes);

  const uint32_t count = Header(segment)->count;
  const uint8_t* tags = Tags(segment);
  const uint32_t* slots = Slots(segment);
  uint32_t high_count = 0;
  for (uint32_t i = 0; i < count; ++i) high_count += SlotSpare(slots[i]) & 1;
  const uint32_t low_count = count - high_count;
  uint8_t* low = AllocateSegment(low_count + low_count / 8 + 1);
  uint8_t* high = AllocateSegment(high_count + high_count / 8 + 1);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t spare = SlotSpare(slots[i]);
    uint8_t* target = (spare & 1) ? high : low;
    const uint32_t j = Header(target)->count++;
    Tags(target)[j] = tags[i];
    // Shifting drops the consumed bit; the marker moves down with the remaining ones.
    Slots(target)[j] = MakeSlot(SlotLeaf(slots[i]), spare >> 1);
  }
  FreeSegment(segment);
  segments_[number] = low;
  segments_.push_back(high);
  if (++split_ == (uint32_t{1} << level_)) {
    ++level_;
    split_ = 0;
  }
}

void ZsetMemberIndex::BulkLoad(const std::vector<std::pair<uint64_t, uint32_t>>& entries) {
  assert(size_ == 0);
  const size_t n = entries.size();
  if (n == 0) return;
  // As many segments as Insert would have reached, so later inserts continue seamlessly.
  const size_t target = std::max<size_t>(1, (n + kTargetPerSegment - 1) / kTargetPerSegment);
  for (size_t i = 0; i < segments_.size(); ++i) FreeSegment(segments_[i]);
  segments_.clear();
  level_ = static_cast<uint32_t>(std::bit_width(target)) - 1;
  split_ = static_cast<uint32_t>(target - (size_t{1} << level_));
  // Addresses are recomputed rather than kept: two shifts and a compare cost less than
  // writing and reading back 4 bytes per member.
  std::vector<uint32_t> counts(target, 0);
  for (size_t i = 0; i < n; ++i) ++counts[Address(entries[i].first)];
  std::vector<uint8_t*> segment_of(target);
  for (size_t s = 0; s < target; ++s) {
    // An eighth of slack, as Insert leaves after growing; Shrink() takes it back.
    segment_of[s] = AllocateSegment(counts[s] + counts[s] / 8 + 1);
    segments_.push_back(segment_of[s]);
    counts[s] = 0;  // from here on: slots filled
  }
  // The writes land in random segments: ask for each destination a few entries ahead, so the
  // loop waits for memory once per batch rather than once per entry.
  constexpr size_t kAhead = 12;
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const uint32_t ahead = Address(entries[i + kAhead].first);
      __builtin_prefetch(Tags(segment_of[ahead]) + counts[ahead], 1);
      __builtin_prefetch(Slots(segment_of[ahead]) + counts[ahead], 1);
    }
    const auto [hash, leaf] = entries[i];
    const uint32_t number = Address(hash);
    uint8_t* segment = segment_of[number];
    const uint32_t j = counts[number]++;
    Tags(segment)[j] = Tag(hash);
    Slots(segment)[j] = MakeSlot(leaf, FreshSpare(hash, Depth(number)));
  }
  for (size_t s = 0; s < target; ++s)
    Header(segment_of[s])->count = static_cast<uint16_t>(counts[s]);
  size_ = n;
}

void ZsetMemberIndex::Swap(ZsetMemberIndex& other) noexcept {
  segments_.swap(other.segments_);
  std::swap(level_, other.level_);
  std::swap(split_, other.split_);
  std::swap(size_, other.size_);
  std::swap(slot_capacity_, other.slot_capacity_);
  std::swap(segment_bytes_, other.segment_bytes_);
  std::swap(refreshed_slots_, other.refreshed_slots_);
}

size_t ZsetMemberIndex::Shrink() {
  const size_t before = MemoryUsage();
  for (size_t n = 0; n < segments_.size(); ++n) {
    uint8_t* segment = segments_[n];
    const size_t count = Header(segment)->count;
    uint8_t* tight = AllocateSegment(count);
    if (Header(tight)->capacity >= Header(segment)->capacity) {
      FreeSegment(tight);
      continue;
    }
    std::memcpy(Tags(tight), Tags(segment), count);
    std::memcpy(Slots(tight), Slots(segment), 4 * count);
    Header(tight)->count = static_cast<uint16_t>(count);
    FreeSegment(segment);
    segments_[n] = tight;
  }
  const size_t after = MemoryUsage();
  return before > after ? before - after : 0;
}

size_t ZsetMemberIndex::MemoryUsage() const { return segment_bytes_ + segments_.MemoryUsage(); }

}  // namespace goblin
