#include "core/entry_index.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>

#include "core/alloc_size.h"
#include "core/packed_cell.h"

namespace goblin {
namespace {

uint64_t ReverseBits(uint64_t x) {
  x = __builtin_bswap64(x);
  x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((x & 0x0F0F0F0F0F0F0F0FULL) << 4);
  x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
  x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
  return x;
}

// Room to leave when a full segment grows: ~1.5% of it, so a busy segment reallocates its
// tail every few inserts at most while the slack stays small.
uint32_t GrowthNeed(uint32_t count) { return count + 1 + count / 64; }

}  // namespace

EntryIndex::EntryIndex(const EntryIndexOwner* owner) : owner_(owner) {
  table_.push_back(Allocate(kMinCapacity));
}

EntryIndex::~EntryIndex() {
  for (size_t s = 0; s < table_.size(); ++s) Free(table_[s]);
}

uint32_t EntryIndex::CapacityIn(size_t bytes, size_t header) {
  if (bytes <= header) return 0;
  size_t c = (bytes - header) / 5;
  while (c > 0 && header + TagBytes(c) + 4 * c > bytes) --c;
  return static_cast<uint32_t>(std::min<size_t>(c, kMaxCapacity));
}

EntryIndex::Segment EntryIndex::Allocate(uint32_t need) {
  need = std::max(need, kMinCapacity);
  Segment seg;
  size_t main_bytes = MainBytes(need);
  uint32_t tail_need = 0;
  if (main_bytes > kSingleBlockBytes) {
    main_bytes = SizeClassAtMost(main_bytes);
    const uint32_t main_capacity = CapacityIn(main_bytes, kHeaderBytes);
    if (main_capacity < need) tail_need = std::max(need - main_capacity, kMinCapacity);
  } else {
    main_bytes = SizeClassAtLeast(main_bytes);
  }
  seg.main = static_cast<uint8_t*>(CheckedMalloc(main_bytes));
  size_t usable = AllocatedSize(seg.main);
  Header* h = HeaderOf(seg.main);
  h->count = 0;
  h->main_capacity = static_cast<uint16_t>(CapacityIn(usable, kHeaderBytes));
  h->tail_capacity = 0;
  h->unused = 0;
  segment_bytes_ += usable;
  if (tail_need > 0) {
    seg.tail = static_cast<uint8_t*>(CheckedMalloc(SizeClassAtLeast(TailBytes(tail_need))));
    const size_t tail_usable = AllocatedSize(seg.tail);
    h->tail_capacity = static_cast<uint16_t>(CapacityIn(tail_usable, 0));
    segment_bytes_ += tail_usable;
  }
  slot_capacity_ += h->main_capacity + h->tail_capacity;
  return seg;
}

void EntryIndex::Free(const Segment& seg) {
  const Header* h = HeaderOf(seg.main);
  slot_capacity_ -= h->main_capacity + h->tail_capacity;
  segment_bytes_ -= AllocatedSize(seg.main) + AllocatedSize(seg.tail);
  std::free(seg.main);
  std::free(seg.tail);
}

EntryIndex::Segment EntryIndex::Reallocate(const Segment& from, uint32_t need) {
  const View old = ViewOf(from);
  Segment seg = Allocate(std::max(need, old.count));
  const View v = ViewOf(seg);
  for (uint32_t i = 0; i < old.count; ++i) {
    v.tag(i) = old.tag(i);
    v.word(i) = old.word(i);
  }
  HeaderOf(seg.main)->count = static_cast<uint16_t>(old.count);
  Free(from);
  return seg;
}

int EntryIndex::FindSlot(const View& v, uint32_t tag, EntryRef ref) const {
  const uint8_t tag_byte = static_cast<uint8_t>(tag);
  const uint32_t word = Word(tag, ref);
  const uint32_t in_main = std::min(v.count, v.main_capacity);
  for (uint32_t b = 0; b < in_main; b += 16) {
    uint32_t mask = MatchMask(v.main_tags + b, tag_byte);
    if (in_main - b < 16) mask &= (1u << (in_main - b)) - 1;
    while (mask != 0) {
      const uint32_t i = b + static_cast<uint32_t>(__builtin_ctz(mask));
      mask &= mask - 1;
      if (v.main_words[i] == word) return static_cast<int>(i);
    }
  }
  for (uint32_t i = in_main; i < v.count; ++i) {
    if (v.tail_tags[i - in_main] == tag_byte && v.tail_words[i - in_main] == word) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void EntryIndex::Grow(uint64_t s) {
  Segment seg = table_[s];
  const View v = ViewOf(seg);
  const uint32_t need = GrowthNeed(v.count);
  const size_t main_bytes = MainBytes(need);
  // When a new main block would hold no more than the current one, only the tail is replaced.
  if (main_bytes > kSingleBlockBytes &&
      CapacityIn(SizeClassAtMost(main_bytes), kHeaderBytes) <= v.main_capacity) {
    const uint32_t tail_need = std::max(need - v.main_capacity, kMinCapacity);
    auto* tail = static_cast<uint8_t*>(CheckedMalloc(SizeClassAtLeast(TailBytes(tail_need))));
    const size_t tail_usable = AllocatedSize(tail);
    const uint32_t tail_capacity = CapacityIn(tail_usable, 0);
    const uint32_t in_tail = v.count - std::min(v.count, v.main_capacity);
    if (in_tail > 0) {
      std::memcpy(tail, v.tail_tags, in_tail);
      std::memcpy(tail + TagBytes(tail_capacity), v.tail_words, 4 * size_t{in_tail});
    }
    if (seg.tail != nullptr) {
      segment_bytes_ -= AllocatedSize(seg.tail);
      std::free(seg.tail);
    }
    segment_bytes_ += tail_usable;
    slot_capacity_ += tail_capacity - v.tail_capacity;
    seg.tail = tail;
    HeaderOf(seg.main)->tail_capacity = static_cast<uint16_t>(tail_capacity);
    table_[s] = seg;
    return;
  }
  table_[s] = Reallocate(seg, need);
}

void EntryIndex::Insert(uint64_t hash, EntryRef ref) {
  assert(ChainOfRef(ref) == ChainOfHash(hash));
  const uint64_t s = Address(hash);
  View v = ViewOf(table_[s]);
  if (v.count == v.capacity()) {
    if (v.count == kMaxCapacity) {
      std::abort();  // 65535 keys agreeing on their low hash bits: the hash is broken.
    }
    Grow(s);
    v = ViewOf(table_[s]);
  }
  const uint32_t tag = TagOf(hash, Depth(s));
  v.tag(v.count) = static_cast<uint8_t>(tag);
  v.word(v.count) = Word(tag, ref);
  ++HeaderOf(table_[s].main)->count;
  ++size_;
  if (size_ > size_t{kTargetPerSegment} * table_.size()) SplitNext();
}

void EntryIndex::Erase(uint64_t hash, EntryRef ref) {
  const uint64_t s = Address(hash);
  Segment seg = table_[s];
  const View v = ViewOf(seg);
  const int i = FindSlot(v, TagOf(hash, Depth(s)), ref);
  assert(i >= 0);
  const uint32_t last = v.count - 1;
  v.tag(static_cast<uint32_t>(i)) = v.tag(last);
  v.word(static_cast<uint32_t>(i)) = v.word(last);
  HeaderOf(seg.main)->count = static_cast<uint16_t>(last);
  --size_;
  const uint32_t count = last;
  if (seg.tail != nullptr && count <= v.main_capacity) {
    segment_bytes_ -= AllocatedSize(seg.tail);
    slot_capacity_ -= v.tail_capacity;
    std::free(seg.tail);
    seg.tail = nullptr;
    HeaderOf(seg.main)->tail_capacity = 0;
    table_[s] = seg;
  }
  const uint32_t capacity = v.main_capacity + HeaderOf(seg.main)->tail_capacity;
  if (capacity - count > std::max<uint32_t>(32, count / 4))
    table_[s] = Reallocate(seg, GrowthNeed(count));
  if (table_.size() > 1 && size_ < size_t{kTargetPerSegment} * table_.size() / 2) MergeLast();
}

void EntryIndex::Replace(uint64_t hash, EntryRef old_ref, EntryRef new_ref) {
  assert(ChainOfRef(old_ref) == ChainOfRef(new_ref));
  const uint64_t s = Address(hash);
  const View v = ViewOf(table_[s]);
  const uint32_t tag = TagOf(hash, Depth(s));
  const int i = FindSlot(v, tag, old_ref);
  assert(i >= 0);
  v.word(static_cast<uint32_t>(i)) = Word(tag, new_ref);
}

void EntryIndex::SplitNext() {
  const uint64_t s = split_;
  const uint32_t depth = level_;
  const Segment seg = table_[s];
  const View v = ViewOf(seg);
  const uint32_t count = v.count;
  std::vector<EntryRef> refs(count);
  std::vector<uint64_t> hashes(count);
  for (uint32_t i = 0; i < count; ++i) {
    refs[i] = MakeEntryRef(ChainOfSlot(s, depth, TagOfSlot(v, i)), v.word(i) & kEntryOffsetMask);
  }
  // The entries are scattered over the pages: overlap their cache misses.
  constexpr uint32_t kAhead = 8;
  for (uint32_t i = 0; i < count && i < kAhead; ++i) owner_->PrefetchAt(refs[i]);
  uint32_t high_count = 0;
  for (uint32_t i = 0; i < count; ++i) {
    if (i + kAhead < count) owner_->PrefetchAt(refs[i + kAhead]);
    hashes[i] = owner_->HashAt(refs[i]);
    assert((hashes[i] & ((uint64_t{1} << depth) - 1)) == s);
    high_count += (hashes[i] >> depth) & 1;
  }
  const uint32_t low_count = count - high_count;
  Segment low = Allocate(GrowthNeed(low_count));
  Segment high = Allocate(GrowthNeed(high_count));
  const View lv = ViewOf(low);
  const View hv = ViewOf(high);
  uint32_t nl = 0, nh = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t tag = TagOf(hashes[i], depth + 1);
    const View& target = ((hashes[i] >> depth) & 1) ? hv : lv;
    uint32_t& n = ((hashes[i] >> depth) & 1) ? nh : nl;
    target.tag(n) = static_cast<uint8_t>(tag);
    target.word(n) = Word(tag, refs[i]);
    ++n;
  }
  HeaderOf(low.main)->count = static_cast<uint16_t>(nl);
  HeaderOf(high.main)->count = static_cast<uint16_t>(nh);
  Free(seg);
  table_[s] = low;
  table_.push_back(high);
  if (++split_ == (uint64_t{1} << level_)) {
    ++level_;
    split_ = 0;
  }
}

void EntryIndex::MergeLast() {
  if (split_ == 0) {
    --level_;
    split_ = uint64_t{1} << level_;
  }
  const uint64_t low_number = split_ - 1;
  const Segment low = table_[low_number];
  const Segment high = table_[table_.size() - 1];
  const View lv = ViewOf(low);
  const View hv = ViewOf(high);
  Segment merged = Allocate(GrowthNeed(lv.count + hv.count));
  const View mv = ViewOf(merged);
  uint32_t n = 0;
  for (int part = 0; part < 2; ++part) {
    const View& from = part == 0 ? lv : hv;
    for (uint32_t i = 0; i < from.count; ++i, ++n) {
      // At depth L the tag starts one bit lower: the address bit that told the halves apart,
      // then the old tag's low 11 bits.
      const uint32_t tag = (((TagOfSlot(from, i) << 1) | static_cast<uint32_t>(part)) & kTagMask);
      mv.tag(n) = static_cast<uint8_t>(tag);
      mv.word(n) = ((tag >> 8) << 28) | (from.word(i) & kEntryOffsetMask);
    }
  }
  HeaderOf(merged.main)->count = static_cast<uint16_t>(n);
  Free(low);
  Free(high);
  table_[low_number] = merged;
  table_.pop_back();
  --split_;
}

uint64_t EntryIndex::Scan(uint64_t cursor, size_t count, std::vector<EntryRef>* out) const {
  if (size_ == 0) return 0;
  count = std::max<size_t>(count, 1);
  size_t reported = 0;
  struct Candidate {
    uint64_t position;  // known top bits of the position
    EntryRef ref;
  };
  std::vector<Candidate> candidates;
  for (;;) {
    const uint64_t s = Address(ReverseBits(cursor));
    const uint32_t depth = Depth(s);
    const View v = ViewOf(table_[s]);
    const uint32_t known = std::min<uint32_t>(depth + 12, 64);
    // Positions a slot cannot tell apart: everything below its known bits.
    const uint64_t unit_minus_one = known >= 64 ? 0 : (~uint64_t{0}) >> known;
    candidates.clear();
    for (uint32_t i = 0; i < v.count; ++i) {
      const uint32_t tag = TagOfSlot(v, i);
      const uint64_t position =
          ReverseBits(s | (static_cast<uint64_t>(tag) << depth)) & ~unit_minus_one;
      const EntryRef ref = MakeEntryRef(ChainOfSlot(s, depth, tag), v.word(i) & kEntryOffsetMask);
      if (position + unit_minus_one < cursor) continue;
      // The cursor falls inside this slot's span (a cursor from before a merge): read the entry.
      if (position < cursor && ReverseBits(owner_->HashAt(ref)) < cursor) continue;
      candidates.push_back({position, ref});
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& a, const Candidate& b) { return a.position < b.position; });
    for (size_t i = 0; i < candidates.size();) {
      if (reported >= count) return candidates[i].position;
      const uint64_t position = candidates[i].position;
      for (; i < candidates.size() && candidates[i].position == position; ++i) {
        out->push_back(candidates[i].ref);
        ++reported;
      }
    }
    // Past the segment's interval: the next segment's first position, 0 after the last.
    if (depth == 0) return 0;
    const uint64_t next = ((cursor >> (64 - depth)) + 1) << (64 - depth);
    if (next == 0) return 0;
    cursor = next;
    if (reported >= count) return cursor;
  }
}

EntryRef EntryIndex::Random(uint64_t* random_state) const {
  assert(size_ > 0);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint64_t s = Address(NextRandom(random_state));
    const View v = ViewOf(table_[s]);
    const uint32_t i = static_cast<uint32_t>(RandomBelow(random_state, v.capacity()));
    if (i < v.count) {
      return MakeEntryRef(ChainOfSlot(s, Depth(s), TagOfSlot(v, i)), v.word(i) & kEntryOffsetMask);
    }
  }
  // A nearly empty table: the first slot from a random segment on.
  const size_t start = RandomBelow(random_state, table_.size());
  for (size_t n = 0; n < table_.size(); ++n) {
    const size_t s = (start + n) % table_.size();
    const View v = ViewOf(table_[s]);
    if (v.count == 0) continue;
    const uint32_t i = static_cast<uint32_t>(RandomBelow(random_state, v.count));
    return MakeEntryRef(ChainOfSlot(s, Depth(s), TagOfSlot(v, i)), v.word(i) & kEntryOffsetMask);
  }
  std::abort();  // size_ > 0 but no slot: invariant 1 is broken.
}

void EntryIndex::BulkLoad(const std::vector<std::pair<uint64_t, EntryRef>>& entries) {
  assert(size_ == 0);
  const size_t n = entries.size();
  if (n == 0) return;
  const size_t target = std::max<size_t>(1, (n + kTargetPerSegment - 1) / kTargetPerSegment);
  for (size_t s = 0; s < table_.size(); ++s) Free(table_[s]);
  while (table_.size() > 0) table_.pop_back();
  level_ = static_cast<uint32_t>(63 - __builtin_clzll(target));
  split_ = target - (uint64_t{1} << level_);
  std::vector<uint32_t> counts(target, 0);
  std::vector<uint32_t> address(n);
  for (size_t i = 0; i < n; ++i) {
    address[i] = static_cast<uint32_t>(Address(entries[i].first));
    ++counts[address[i]];
  }
  for (size_t s = 0; s < target; ++s) {
    if (counts[s] > kMaxCapacity) std::abort();
    table_.push_back(Allocate(counts[s]));
  }
  for (size_t i = 0; i < n; ++i) {
    const uint64_t s = address[i];
    Header* h = HeaderOf(table_[s].main);
    const View v = ViewOf(table_[s]);
    const uint32_t tag = TagOf(entries[i].first, Depth(s));
    v.tag(h->count) = static_cast<uint8_t>(tag);
    v.word(h->count) = Word(tag, entries[i].second);
    ++h->count;
  }
  size_ = n;
}

size_t EntryIndex::MemoryUsage() const { return segment_bytes_ + table_.MemoryUsage(); }

std::string EntryIndex::Validate() const {
  size_t total = 0;
  size_t capacity = 0;
  size_t bytes = 0;
  if (table_.size() != (size_t{1} << level_) + split_) return "segment count != 2^L + p";
  for (size_t s = 0; s < table_.size(); ++s) {
    const Segment& seg = table_[s];
    const View v = ViewOf(seg);
    const uint32_t depth = Depth(s);
    if (v.count > v.capacity()) return "count above capacity";
    if (v.main_capacity < kMinCapacity) return "main capacity below minimum";
    if ((seg.tail == nullptr) != (v.tail_capacity == 0)) return "tail capacity without tail";
    if (seg.tail != nullptr && v.tail_capacity < kMinCapacity) return "tail capacity below minimum";
    if (v.main_capacity != CapacityIn(AllocatedSize(seg.main), kHeaderBytes)) {
      return "main capacity != block size";
    }
    capacity += v.capacity();
    bytes += AllocatedSize(seg.main) + AllocatedSize(seg.tail);
    for (uint32_t i = 0; i < v.count; ++i) {
      const uint32_t tag = TagOfSlot(v, i);
      const EntryRef ref = MakeEntryRef(ChainOfSlot(s, depth, tag), v.word(i) & kEntryOffsetMask);
      const uint64_t hash = owner_->HashAt(ref);
      if (Address(hash) != s) return "slot in the wrong segment";
      if (TagOf(hash, depth) != tag) return "tag does not match the entry's hash";
      for (uint32_t j = 0; j < i; ++j) {
        if (v.word(j) == v.word(i) && v.tag(j) == v.tag(i)) return "duplicate slot";
      }
    }
    total += v.count;
  }
  if (total != size_) return "size != slots";
  if (capacity != slot_capacity_) return "slot capacity miscounted";
  if (bytes != segment_bytes_) return "segment bytes miscounted";
  return "";
}

}  // namespace goblin
