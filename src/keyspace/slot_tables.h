// SlotTables: a database's keys in cluster mode, one KeyTable per hash slot (core/key_slot.h),
// so that CLUSTER COUNTKEYSINSLOT is a table's size and CLUSTER GETKEYSINSLOT reads only the
// keys it returns, for about a byte per key more than one table for the whole keyspace.
//
// Layout:
//
//   pages_[256] --> Page: 64 KeyTables (48 bytes each, 3 KB), allocated at the first insert
//        |          into one of its slots; a slot's table allocates nothing while empty
//        +--> nullptr for a page whose 64 slots never held a key
//   page_counts_: FenwickTree over the 256 pages' key counts (2 KB)
//
// A node usually serves a few ranges of consecutive slots, so it allocates only their pages.
// Where the extra bytes go, 1M string keys spread over all 16384 slots (~61 a slot; measured
// by DatabaseSlotsTest.MemoryPerKey): the tables 0.79 B/key, each slot's one-entry directory
// and its segment, smaller than one table's and so a little less full, 0.39 B/key; in all
// 12.79 B/key of table against 11.61 standalone (+1.18), and as much more allocated.
//
// Picking a random key uniformly needs a slot picked in proportion to its keys: the counts
// find the page in 8 steps, then the page's 64 table sizes (one 3 KB pass) the slot. Counts per
// slot would save that pass for 126 KB more.
//
// Why not one table with the slot in the hash's top bits (which would keep each slot's keys
// together in hash order): KeyTable's directory is indexed by the hash's top bits, so it would
// need 2^14 entries to separate the slots before it separates keys, and a node serving one
// hash-tagged slot of millions of keys would need a directory 2^13 times deeper still (2^27
// entries, 2 GB). Separate tables size each directory by its own slot's keys.
//
// SCAN cursor, one 64-bit number:
//
//   [63 ............................ 14][13 .... 0]
//    the slot table's cursor (a hash      slot
//    position; its low 14 bits are 0)
//
// A slot table's cursor marks a home bucket's range boundary, which has at most depth + 12
// significant bits (KeyTable::Scan); its low 14 bits are 0 while the slot's directory has
// fewer than 2^38 entries (4 TB), so the two never overlap. Scan reports one home bucket of
// the cursor's slot; past the slot's last one it moves to the next slot that holds keys, with
// its table cursor 0. Every call moves the cursor forward (a later hash position in the same
// slot, or a later slot), and every key present for the whole scan is reported: its slot is
// visited (a slot is skipped only while empty) and, within it, KeyTable::Scan's guarantee
// holds from the table cursor 0 to its end. Cursor 0 is slot 0's start, and the end.
//
// Invariants:
//   1. A key is stored in the table of KeySlot(key) and nowhere else.
//   2. page_counts_ holds each page's key count (the sum of its tables' sizes); its total is
//      the number of keys. A page that ever held a key stays allocated until Clear.
//   3. table_bytes_ is the sum of the slot tables' AllocatedBytes().
// Not thread-safe: one thread owns the keyspace.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/fenwick_tree.h"
#include "core/key_entry.h"
#include "core/key_slot.h"
#include "core/key_table.h"

namespace goblin {

// The keyspace's table: each slot carries the key's access stamp (core/access_clock.h).
using KeyspaceTable = KeyTable<KeyEntry, KeyOfEntry, 3>;

class SlotTables {
 public:
  using Table = KeyspaceTable;
  static constexpr int kPageSlots = 64;
  static constexpr int kPages = kClusterSlots / kPageSlots;
  static constexpr int kSlotBits = 14;
  static constexpr uint64_t kSlotMask = kClusterSlots - 1;
  static_assert(kClusterSlots == 1 << kSlotBits);

  SlotTables() : page_counts_(kPages) {}
  // Frees the tables, not the entries: call Clear(deleter) first to free them.
  ~SlotTables() = default;
  SlotTables(const SlotTables&) = delete;
  SlotTables& operator=(const SlotTables&) = delete;

  size_t size() const { return page_counts_.total(); }
  size_t KeysInSlot(int slot) const {
    const Table* table = Find(slot);
    return table == nullptr ? 0 : table->size();
  }

  // The table of slot, or nullptr when its page was never allocated (the slot holds no key).
  const Table* Find(int slot) const {
    const std::unique_ptr<Page>& page = pages_[slot / kPageSlots];
    return page == nullptr ? nullptr : &page->tables[slot % kPageSlots];
  }
  Table* Find(int slot) {
    return const_cast<Table*>(static_cast<const SlotTables*>(this)->Find(slot));
  }
  const Table* TableOf(std::string_view key) const { return Find(KeySlot(key)); }
  Table* TableOf(std::string_view key) { return Find(KeySlot(key)); }

  // Adds entry to its slot's table. REQUIRES: its key is absent.
  void Insert(KeyEntry* entry, uint32_t stamp) {
    const int slot = KeySlot(entry->key());
    Table& table = Allocate(slot);
    const size_t before = table.AllocatedBytes();
    table.Insert(entry, stamp);
    table_bytes_ += table.AllocatedBytes() - before;
    page_counts_.Add(slot / kPageSlots, 1);
  }

  // Removes and returns key's entry (the caller frees it), or nullptr.
  KeyEntry* Erase(std::string_view key) {
    const int slot = KeySlot(key);
    Table* table = Find(slot);
    if (table == nullptr) return nullptr;
    const size_t before = table->AllocatedBytes();
    KeyEntry* entry = table->Erase(key);
    if (entry == nullptr) return nullptr;
    table_bytes_ -= before - table->AllocatedBytes();
    page_counts_.Add(slot / kPageSlots, -1);
    return entry;
  }

  // One step of a SCAN (see the cursor at the top): reports the entries of one home bucket of
  // the cursor's slot, and returns the next cursor, 0 after the last slot holding keys.
  template <class F>
  uint64_t Scan(uint64_t cursor, F&& fn) const {
    const int slot = static_cast<int>(cursor & kSlotMask);
    if (const Table* table = Find(slot); table != nullptr && !table->empty()) {
      const uint64_t next = table->Scan(cursor & ~kSlotMask, fn);
      assert((next & kSlotMask) == 0);
      if (next != 0) return next | static_cast<uint64_t>(slot);
    }
    const size_t next_slot = NextNonEmpty(slot + 1);
    return next_slot == kClusterSlots ? 0 : next_slot;
  }

  // A random entry, nullptr when there is none: a slot picked with probability proportional to
  // its keys, then a random entry of its table (KeyTable::Random: within ~10% of uniform).
  KeyEntry* Random(uint64_t random_bits) const {
    if (size() == 0) return nullptr;
    uint64_t state = random_bits;
    const Table* table = Find(RandomSlot(&state));
    return table->Random(key_table_internal::SplitMix64(&state));
  }

  // Calls fn(Table::Slot) on up to n entries stored next to each other from a random place:
  // KeyTable::Sample in a slot picked as Random does, then in the next slots holding keys when
  // it holds fewer than n. Fewer than n only when there are fewer keys.
  template <class F>
  void Sample(uint64_t random_bits, size_t n, F&& fn) const {
    n = std::min(n, size());
    if (n == 0) return;
    uint64_t state = random_bits;
    size_t slot = RandomSlot(&state);
    for (size_t found = 0;;) {
      const Table* table = Find(static_cast<int>(slot));
      const size_t take = std::min(n - found, table->size());
      table->Sample(key_table_internal::SplitMix64(&state), take, fn);
      found += take;
      if (found == n) return;
      slot = NextNonEmpty(slot + 1);
      if (slot == kClusterSlots) slot = NextNonEmpty(0);
    }
  }

  // Calls fn(const KeyEntry*) on up to limit entries of slot, in no useful order, expired or
  // not (CLUSTER GETKEYSINSLOT expires nothing). Reads only as far as the limit-th entry.
  template <class F>
  void ForEachKeyInSlot(int slot, size_t limit, F&& fn) const {
    const Table* table = Find(slot);
    if (table == nullptr || limit == 0) return;
    size_t left = limit;
    table->ForEachWhile([&](const KeyEntry* entry) {
      fn(entry);
      return --left != 0;
    });
  }

  // Calls f on every entry with the table's ForEach or ForEachWithStamp (pass one as visit),
  // slot by slot.
  template <class F>
  void ForEachTable(F&& f) const {
    for (const std::unique_ptr<Page>& page : pages_) {
      if (page == nullptr) continue;
      for (const Table& table : page->tables) {
        if (!table.empty()) f(table);
      }
    }
  }

  // Calls deleter(KeyEntry*) on every entry and frees every table and page.
  template <class F>
  void Clear(F&& deleter) {
    for (std::unique_ptr<Page>& page : pages_) {
      if (page == nullptr) continue;
      for (Table& table : page->tables) table.Clear(deleter);
      page.reset();
    }
    page_counts_ = FenwickTree(kPages);
    table_bytes_ = 0;
  }

  // Heap bytes held by the tables, their pages and the counts, not by the entries.
  size_t AllocatedBytes() const {
    size_t pages = 0;
    for (const std::unique_ptr<Page>& page : pages_) pages += page != nullptr;
    return table_bytes_ + pages * sizeof(Page) + page_counts_.AllocatedBytes();
  }

 private:
  // 64 tables in one allocation (a struct, not a new[] of tables, which would add a cookie
  // and round 3 KB up to the next size class).
  struct Page {
    std::array<Table, kPageSlots> tables;
  };

  Table& Allocate(int slot) {
    std::unique_ptr<Page>& page = pages_[slot / kPageSlots];
    if (page == nullptr) page = std::make_unique<Page>();
    return page->tables[slot % kPageSlots];
  }

  // A slot picked with probability proportional to its keys: a page by the counts, then the
  // slot within it holding the remaining rank. REQUIRES: size() > 0.
  size_t RandomSlot(uint64_t* state) const {
    const uint64_t r = key_table_internal::SplitMix64(state);
    auto rank = static_cast<uint64_t>((static_cast<unsigned __int128>(r) * size()) >> 64);
    const size_t page = page_counts_.FindRank(rank);
    rank -= page_counts_.PrefixSum(page);
    const std::array<Table, kPageSlots>& tables = pages_[page]->tables;
    for (int i = 0;; ++i) {
      if (rank < tables[i].size()) return page * kPageSlots + i;
      rank -= tables[i].size();
    }
  }

  // The first slot >= from holding keys, or kClusterSlots when there is none.
  size_t NextNonEmpty(size_t from) const {
    size_t page = from / kPageSlots;
    if (page == kPages) return kClusterSlots;
    if (pages_[page] != nullptr) {
      for (size_t i = from % kPageSlots; i < kPageSlots; ++i) {
        if (!pages_[page]->tables[i].empty()) return page * kPageSlots + i;
      }
    }
    page = page_counts_.NextNonZero(page + 1);
    if (page == kPages) return kClusterSlots;
    for (size_t i = 0;; ++i) {
      if (!pages_[page]->tables[i].empty()) return page * kPageSlots + i;
    }
  }

  std::array<std::unique_ptr<Page>, kPages> pages_;
  FenwickTree page_counts_;  // keys per page
  size_t table_bytes_ = 0;
};

}  // namespace goblin
