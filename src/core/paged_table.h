// PagedTable: the large form of a hash (entries [field cell][value cell]) or a set (entries
// [member cell]): packed entries in pages (entry_pages.h) found through a compact index of
// 5-byte slots (entry_index.h). OBJECT ENCODING calls it "hashtable"; GOBLIN.STATS "paged-table".
//
// Where the bytes go, per element at N = 1M, through jemalloc (bench/hash_set_bench.cc; the
// same within 0.15 B at 0.5M, 1.1M and 2M):
//
//   workload                        entry   page slack   index   total    target   Redis 7.2
//   hash, 16 B fields and values    34      0.40         5.18    39.58    <= 40    80
//   set, "user:%08d"                14      0.12         5.17    19.30    <= 20    30
//   hash, int user id -> unix time   9      0.11         5.17    14.28    <= 20    63
//   set, int user ids                4      0.08         5.17     9.25    <= 12    48
//
//   entry: the cells (packed_cell.h); page slack: the unused end of each 8 KB page (< one
//   entry), 16 partly filled append pages, page tables; index: a 5-byte slot at 98.7% of the
//   segments' capacity, plus segment headers and table (entry_index.h).
//
//   +--------------------------+        +---------------------------------------------+
//   | EntryIndex                |        | EntryPages: 16 chains of 8 KB pages         |
//   |  segment: tags | words --+-ref--->|  [field][value][field][value][dead][...]    |
//   +--------------------------+        +---------------------------------------------+
//
// A lookup hashes the key (integers by value, strings by bytes: packed_cell.h), compares the
// tags of one index segment, and compares the key with each candidate entry's first cell.
// An insert appends to the chain's page and adds a slot; a value that changes size is
// rewritten at the end of the chain and its slot repointed; a delete removes the slot and
// leaves a hole that page compaction reclaims. No operation moves more than one index segment
// (a few KB) and one page (8 KB), and a split reads 256-512 entries: the slowest single insert
// while a hash or set grows to 10M elements took 54 us.
//
// Invariants:
//  1. The live entries of the pages and the slots of the index correspond one to one: every
//     live entry at ref has a slot (its key's hash, ref), except during a bulk build
//     (AppendUnindexed ... BuildIndex), when the index is empty and pending_ holds them.
//  2. No two live entries hold equal keys.
//
// Not thread-safe. Entry pointers are valid until the next mutation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/collection.h"
#include "core/entry_index.h"
#include "core/entry_pages.h"
#include "core/packed_cell.h"

namespace goblin {

// What GOBLIN.STATS reports about a hash or a set.
struct PackedStats {
  const char* encoding = "";  // what OBJECT ENCODING says
  const char* layout = "";    // what it is: "packed-run", "intset" or "paged-table"
  size_t size = 0;
  size_t bytes = 0;           // MemoryUsage()
  size_t payload_bytes = 0;   // bytes of live entries
  size_t dead_bytes = 0;      // holes left by deletions, not yet compacted
  size_t capacity_bytes = 0;  // payload bytes the blocks could hold
  double fill = 0;            // payload_bytes / capacity_bytes
  size_t pages = 0;
  size_t page_bytes = 0;
  size_t index_segments = 0;
  size_t index_slots = 0;  // slot capacity
  size_t index_bytes = 0;
};

// GOBLIN.STATS's fields for a hash or set layout (after type, encoding and bytes).
void AppendPackedStatFields(const PackedStats& stats, StatFields* fields);

// The first k entries of a random permutation of 0..n-1 (partial Fisher-Yates).
void SampleDistinctIndices(size_t n, size_t k, uint64_t* random_state, std::vector<uint32_t>* out);

class PagedTable final : private EntryIndexOwner, private EntryRelocator {
 public:
  // with_values: entries are [key][value] (hashes), else [key] (sets).
  explicit PagedTable(bool with_values);
  ~PagedTable() override;
  PagedTable(const PagedTable&) = delete;
  PagedTable& operator=(const PagedTable&) = delete;

  size_t size() const { return index_.size() + pending_.size(); }
  bool with_values() const { return with_values_; }

  // The entry holding key, or nullopt.
  std::optional<EntryRef> Find(const PackedKey& key) const;
  const uint8_t* EntryAt(EntryRef ref) const { return pages_.At(ref); }

  // Adds an entry. REQUIRES: key absent; value != nullptr iff with_values().
  void Insert(const PackedKey& key, const CellInput* value);
  // Replaces the value of key's entry at ref. REQUIRES: with_values(); Find(key) == ref.
  void SetValue(const PackedKey& key, EntryRef ref, const CellInput& value);
  // Removes key's entry; returns whether it was there.
  bool Erase(const PackedKey& key);
  // Removes the entry at ref (from RandomRef or Scan). REQUIRES: it is live.
  void EraseAt(EntryRef ref);

  // REQUIRES: size() > 0.
  EntryRef RandomRef(uint64_t* random_state) const { return index_.Random(random_state); }
  // See EntryIndex::Scan.
  uint64_t Scan(uint64_t cursor, size_t count, std::vector<EntryRef>* out) const {
    return index_.Scan(cursor, count, out);
  }
  // min(count, size()) distinct entries, uniformly chosen, in random order.
  void SampleDistinct(size_t count, uint64_t* random_state, std::vector<EntryRef>* out) const;
  // fn(const uint8_t* entry) for every entry, in page order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    pages_.ForEach([&](EntryRef, const uint8_t* entry, size_t) { fn(entry); });
  }

  // Bulk building, for loads and Optimize: append every entry with AppendUnindexed, then call
  // BuildIndex once; nothing else may be called in between. REQUIRES: the table is empty at
  // the start; the entries have distinct keys; `entry` is a complete encoded entry.
  void AppendUnindexed(const uint8_t* entry, size_t bytes, uint64_t hash);
  // Whether the appended entries have distinct keys, as BuildIndex requires: a restore from
  // bytes nobody vouches for checks it first. O(n) (a radix sort of the hashes).
  bool PendingKeysDistinct() const;
  void BuildIndex();

  // The hash of an entry's key.
  static uint64_t HashOfEntry(const uint8_t* entry);
  size_t EntrySize(const uint8_t* entry) const { return pages_.EntrySize(entry); }

  // Bytes allocated, this object included.
  size_t MemoryUsage() const;
  // Rebuilds into full pages and a tight index (briefly two copies). Returns bytes saved.
  static size_t Optimize(std::unique_ptr<PagedTable>* table);
  void FillStats(PackedStats* stats) const;
  // Checks invariants 1-2 and those of the pages and the index; "" when they hold.
  std::string Validate() const;

 private:
  uint64_t HashAt(EntryRef ref) const override { return HashOfEntry(pages_.At(ref)); }
  void PrefetchAt(EntryRef ref) const override { __builtin_prefetch(pages_.At(ref)); }
  void Relocated(EntryRef old_ref, EntryRef new_ref, const uint8_t* entry) override {
    index_.Replace(HashOfEntry(entry), old_ref, new_ref);
  }

  bool with_values_;
  EntryPages pages_;
  EntryIndex index_;
  std::vector<std::pair<uint64_t, EntryRef>> pending_;
};

}  // namespace goblin
