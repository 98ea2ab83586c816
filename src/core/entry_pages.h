// EntryPages: where the entries of a large hash or set live, packed back to back in pages.
//
// An entry is one cell (a set member) or two (a hash field and its value), packed_cell.h:
//
//   hash entry  [field cell][value cell]     16-byte field, 16-byte value: 1+16 + 1+16 = 34 B
//   set entry   [member cell]                "user:00000001": 14 B; the integer 10000001: 4 B
//
// Entries are split over kChainCount chains by their key hash bits 0..3, so that a 32-bit
// EntryRef = [chain 4][offset 28] can address 16 x 256 MB while the index stores only the 28
// offset bits (entry_index.h). Within a chain an offset is [page 15][byte in page 13]:
//
//   chain: page table (vector of Page), free page numbers, the page being appended to
//   page:  one malloc of at most kPageBytes (8 KB, a size class), entries back to back:
//   +---------+---------+-------+---------+---------+----- ... ------+
//   | entry   | entry   | dead  | entry   | entry   | unused         |
//   +---------+---------+-------+---------+---------+----- ... ------+
//   0                                               used            capacity
//
// New entries go to the chain's append page. A chain's first page starts small and grows by
// realloc (offsets, not pointers, name entries, so a page may move); later pages are
// allocated at kPageBytes. An entry over kOwnPageBytes gets a page of its own, of its exact
// size. Per element this costs the entry, plus the unused end of 16 append pages (about
// 64 KB per collection in all) and 24 bytes of page table per page (0.1 B per element).
//
// Deleting leaves a hole: the entry's first byte becomes a dead marker, 0xFD for a 1-byte
// hole, or 0xFC then varint(hole bytes) (which fits: a hole of n >= 2 bytes needs at most n).
// Cells never start with those bytes. When a page's dead bytes pass a third of its used
// bytes, the page is compacted at once: live entries slide down, each move is reported to the
// EntryRelocator (which updates that entry's slot), and the block shrinks to the size class
// of what remains. So no page is more than a third dead, a compaction moves at most one page
// (8 KB, ~250 entries), and its cost is at most two moves per deleted entry.
//
// Invariants:
//  1. Every page's bytes [0, used) are a sequence of live entries and dead markers whose
//     sizes sum to used; its dead count is the sum of the dead markers' sizes.
//  2. dead * 3 <= used for every page (compaction restores it when a kill breaks it), and a
//     page whose entries are all dead is freed.
//  3. Shared pages have capacity <= kPageBytes, so byte offsets fit 13 bits; an own page
//     holds exactly one entry at offset 0.
//  4. A free page number has a null page; the append page, when set, is a shared page.
//
// Limits: 2^15 pages per chain (256 MB of entries per chain, ~4 GB per collection); Append
// aborts beyond. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/entry_index.h"
#include "core/packed_cell.h"

namespace goblin {

// Told about every entry that compaction moves.
class EntryRelocator {
 public:
  virtual ~EntryRelocator() = default;
  // The entry at old_ref now lives at new_ref (same chain); `entry` points at it.
  virtual void Relocated(EntryRef old_ref, EntryRef new_ref, const uint8_t* entry) = 0;
};

class EntryPages {
 public:
  static constexpr uint32_t kPageBits = 13;
  static constexpr uint32_t kPageBytes = uint32_t{1} << kPageBits;
  static constexpr uint32_t kMaxPages = uint32_t{1} << (kEntryOffsetBits - kPageBits);
  static constexpr uint32_t kOwnPageBytes = 2048;
  static constexpr uint8_t kDeadRun = 0xFC;
  static constexpr uint8_t kDeadByte = 0xFD;

  // cells_per_entry: 2 for hashes, 1 for sets.
  explicit EntryPages(int cells_per_entry) : cells_(cells_per_entry) {}
  ~EntryPages();
  EntryPages(const EntryPages&) = delete;
  EntryPages& operator=(const EntryPages&) = delete;

  // Room for a new entry of `bytes` bytes in `chain`; returns where to write it and sets *ref.
  // Pointers into the chain's append page from before the call may be invalidated.
  uint8_t* Append(uint32_t chain, size_t bytes, EntryRef* ref);

  const uint8_t* At(EntryRef ref) const {
    const uint32_t offset = OffsetOfRef(ref);
    return chains_[ChainOfRef(ref)].pages[offset >> kPageBits].data + (offset & (kPageBytes - 1));
  }
  uint8_t* MutableAt(EntryRef ref) { return const_cast<uint8_t*>(At(ref)); }

  size_t EntrySize(const uint8_t* entry) const {
    const uint8_t* p = SkipCell(entry);
    if (cells_ == 2) p = SkipCell(p);
    return static_cast<size_t>(p - entry);
  }

  // Resizes the entry at ref from old_bytes to new_bytes where it lies, when it is the last
  // entry of its chain's append page and the page has the room; returns whether it did (the
  // caller then rewrites the entry's bytes). A value that changes size as soon as it is
  // written (a field given a deadline right after HSET) so costs no hole.
  bool ResizeLast(EntryRef ref, size_t old_bytes, size_t new_bytes);

  // Marks the entry at ref dead. May compact its page, reporting each moved entry.
  void Kill(EntryRef ref, EntryRelocator* relocator);

  // Calls fn(EntryRef, const uint8_t* entry, size_t bytes) for every live entry, chain by
  // chain, page by page, in page order. REQUIRES: fn does not modify the pages.
  template <typename Fn>
  void ForEach(Fn&& fn) const;

  size_t live_bytes() const { return live_bytes_; }
  size_t dead_bytes() const { return dead_bytes_; }
  size_t page_count() const { return page_count_; }
  size_t page_bytes() const { return page_bytes_; }
  // Bytes allocated: pages and page tables.
  size_t MemoryUsage() const;

  // Checks invariants 1-4; "" when they hold.
  std::string Validate() const;

 private:
  struct Page {
    uint8_t* data = nullptr;
    uint32_t capacity = 0;
    uint32_t used = 0;
    uint32_t dead = 0;
  };
  struct Chain {
    std::vector<Page> pages;
    std::vector<uint32_t> free_pages;
    uint32_t append = kNoPage;
  };
  static constexpr uint32_t kNoPage = ~uint32_t{0};

  // Size of the live entry or dead marker at p.
  size_t RunSize(const uint8_t* p) const;
  uint32_t NewPage(uint32_t chain, size_t bytes);
  void FreePage(uint32_t chain, uint32_t page);
  void Compact(uint32_t chain, uint32_t page, EntryRelocator* relocator);

  int cells_;
  Chain chains_[kChainCount];
  size_t live_bytes_ = 0;
  size_t dead_bytes_ = 0;
  size_t page_count_ = 0;
  size_t page_bytes_ = 0;
};

template <typename Fn>
void EntryPages::ForEach(Fn&& fn) const {
  for (uint32_t c = 0; c < kChainCount; ++c) {
    const Chain& chain = chains_[c];
    for (uint32_t i = 0; i < chain.pages.size(); ++i) {
      const Page& page = chain.pages[i];
      for (uint32_t off = 0; off < page.used;) {
        const uint8_t* p = page.data + off;
        const size_t n = RunSize(p);
        if (*p != kDeadRun && *p != kDeadByte) fn(MakeEntryRef(c, (i << kPageBits) | off), p, n);
        off += static_cast<uint32_t>(n);
      }
    }
  }
}

inline size_t EntryPages::RunSize(const uint8_t* p) const {
  if (*p == kDeadByte) return 1;
  if (*p == kDeadRun) {
    uint64_t n;
    GetVarint(p + 1, &n);
    return n;
  }
  return EntrySize(p);
}

}  // namespace goblin
