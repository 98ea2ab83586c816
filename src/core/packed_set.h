// goblin::PackedSet: the value behind a Redis set key, with no protocol code. The set commands
// (SADD, SREM, SPOP, SRANDMEMBER, SINTER..., SSCAN) are written against this class only.
//
// Three forms, as in Redis 7.2:
//   intset     IntSet (int_set.h): sorted fixed-width integers, while every member is an
//              integer and there are at most SetLimits::max_intset_entries. "intset".
//   listpack   PackedRun<1> (packed_run.h): member cells in insertion order, while there are
//              at most max_listpack_entries members of at most max_listpack_value bytes.
//              "listpack".
//   hashtable  PagedTable (paged_table.h): member cells in 8 KB pages plus an index of 5-byte
//              slots: 19.3 bytes per member for "user:%08d" (Redis 7.2: ~30), 9.25 for
//              integer ids (Redis: ~48). "hashtable"; Stats() tells the truth ("paged-table").
// Moves, exactly as Redis 7.2's setTypeAddAux: an intset that receives a non-integer becomes
// a listpack when it has fewer than max_listpack_entries members and both the new member and
// the decimal text of its smallest and largest are within max_listpack_value bytes, else a
// hashtable; an intset past max_intset_entries and a listpack that would break a limit become
// hashtables. Nothing moves back.
//
// Integer members are stored as integers in every form and read back as the same text
// (packed_cell.h), so "007" and "-0" stay strings and "10000001" costs 4 bytes.
//
// Invariants:
//  1. Exactly the form named by encoding_ holds members; the others are empty.
//  2. The intset holds only integers; no form holds a member twice.
//
// Not thread-safe. String views handed out are valid until the next mutation; no argument may
// point into the set it is passed to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/int_set.h"
#include "core/packed_cell.h"
#include "core/packed_run.h"
#include "core/paged_table.h"

namespace goblin {

// The conversion thresholds (set-max-intset-entries, set-max-listpack-entries/-value).
struct SetLimits {
  size_t max_intset_entries = 512;
  size_t max_listpack_entries = 128;
  size_t max_listpack_value = 64;
};

class PackedSet {
 public:
  enum class Encoding { kIntset, kListpack, kHashtable };

  // An empty intset, as Redis's createIntsetObject (SINTERSTORE, SUNIONSTORE, ... results).
  PackedSet();
  // The form Redis's setTypeCreate picks for a new set (SADD, SMOVE) whose first member is
  // first_member and that expects size_hint members: intset when the member is an integer and
  // the hint is within max_intset_entries, else listpack when the hint is within
  // max_listpack_entries, else hashtable. Adds nothing.
  PackedSet(std::string_view first_member, size_t size_hint, const SetLimits& limits);
  ~PackedSet();
  PackedSet(PackedSet&&) noexcept;
  PackedSet& operator=(PackedSet&&) noexcept;
  PackedSet(const PackedSet&) = delete;
  PackedSet& operator=(const PackedSet&) = delete;

  // A deep copy in the same form.
  PackedSet Clone() const;

  size_t size() const;
  bool empty() const { return size() == 0; }
  Encoding encoding() const { return encoding_; }
  // "intset", "listpack" or "hashtable", as OBJECT ENCODING replies.
  const char* EncodingName() const;

  // Adds member; returns whether it was new. May change the form (see the top of the file).
  bool Add(std::string_view member, const SetLimits& limits);
  // Removes member; returns whether it was present.
  bool Remove(std::string_view member);
  bool Contains(std::string_view member) const;
  // Redis's setTypeMaybeConvert, before SADD adds `new_members` members to an existing set: a
  // listpack expecting more than max_listpack_entries, or an intset expecting more than
  // max_intset_entries, moves to the hashtable form now.
  void PrepareForInsert(size_t new_members, const SetLimits& limits);
  // Moves to the hashtable form now (no-op when already there).
  void ConvertToLarge();

  // fn(std::string_view member) for every member: ascending for an intset, insertion order
  // for a listpack (both as Redis), page order for a hashtable.
  template <typename Fn>
  void ForEach(Fn&& fn) const;

  // SRANDMEMBER with a negative count: fn(member) `count` times, members drawn independently
  // and (nearly) uniformly. REQUIRES: !empty() or count == 0.
  template <typename Fn>
  void RandomWithRepetition(size_t count, uint64_t* random_state, Fn&& fn) const;
  // SRANDMEMBER / SPOP with a positive count: fn(member) for min(count, size()) distinct
  // members drawn uniformly, in random order.
  template <typename Fn>
  void RandomDistinct(size_t count, uint64_t* random_state, Fn&& fn) const;
  // SPOP: removes a random member into *out; false when the set is empty.
  bool PopRandom(uint64_t* random_state, std::string* out);

  // SSCAN: calls fn(member) for the members at or after cursor and returns the next cursor,
  // 0 when done; `count` is a hint. The small forms report everything and return 0, as Redis
  // does. Every member present for a whole scan is reported exactly once.
  template <typename Fn>
  uint64_t Scan(uint64_t cursor, size_t count, Fn&& fn) const;

  // Bytes allocated for this set, the object itself included (MEMORY USAGE).
  size_t MemoryUsage() const;
  // Repacks to the tightest form; returns bytes saved (see PackedHash::Optimize).
  size_t Optimize();
  PackedStats Stats() const;
  std::string Validate() const;

  // Bulk building, for loaders of sets too large for the small forms: BeginBulkLoad empties
  // the set into the hashtable form, BulkAppend adds a member without looking it up, and
  // EndBulkLoad checks that no member came twice (false: the set holds garbage and must be
  // dropped) and builds the index. Nothing else may be called in between.
  void BeginBulkLoad();
  void BulkAppend(const CellInput& member);
  bool EndBulkLoad();

  // Appends the set to *out: [u8 form][varint count][member cells]; Restore reads it back in
  // the same form. Returns false from Restore on truncated or malformed bytes, on a non-integer
  // in an intset, or on a member stored twice.
  void Dump(std::string* out) const;
  static bool Restore(std::string_view data, PackedSet* out);

 private:
  // A member handed to callbacks: an intset value (entry == nullptr) or a member cell.
  struct Pick {
    const uint8_t* entry;
    int64_t integer;
  };
  void RandomPicks(size_t count, bool distinct, uint64_t* random_state,
                   std::vector<Pick>* out) const;
  uint64_t ScanPicks(uint64_t cursor, size_t count, std::vector<Pick>* out) const;
  template <typename Fn>
  static void Visit(const Pick& pick, Fn& fn);
  void IntsetToListpack();
  PackedKey KeyOf(const CellInput& member) const { return PackedKey::From(member); }

  Encoding encoding_ = Encoding::kIntset;
  IntSet ints_;
  PackedRun<1> small_;
  std::unique_ptr<PagedTable> large_;
};

template <typename Fn>
void PackedSet::Visit(const Pick& pick, Fn& fn) {
  char scratch[kInt64TextMax];
  if (pick.entry == nullptr) {
    fn(std::string_view(scratch, FormatInt64(pick.integer, scratch)));
    return;
  }
  CellView member;
  DecodeCell(pick.entry, &member);
  fn(member.Text(scratch));
}

template <typename Fn>
void PackedSet::ForEach(Fn&& fn) const {
  switch (encoding_) {
    case Encoding::kIntset:
      for (size_t i = 0; i < ints_.size(); ++i) Visit(Pick{nullptr, ints_.At(i)}, fn);
      break;
    case Encoding::kListpack:
      small_.ForEach([&](const uint8_t* entry) { Visit(Pick{entry, 0}, fn); });
      break;
    case Encoding::kHashtable:
      large_->ForEach([&](const uint8_t* entry) { Visit(Pick{entry, 0}, fn); });
      break;
  }
}

template <typename Fn>
void PackedSet::RandomWithRepetition(size_t count, uint64_t* random_state, Fn&& fn) const {
  std::vector<Pick> picks;
  RandomPicks(count, false, random_state, &picks);
  for (const Pick& pick : picks) Visit(pick, fn);
}

template <typename Fn>
void PackedSet::RandomDistinct(size_t count, uint64_t* random_state, Fn&& fn) const {
  std::vector<Pick> picks;
  RandomPicks(count, true, random_state, &picks);
  for (const Pick& pick : picks) Visit(pick, fn);
}

template <typename Fn>
uint64_t PackedSet::Scan(uint64_t cursor, size_t count, Fn&& fn) const {
  std::vector<Pick> picks;
  const uint64_t next = ScanPicks(cursor, count, &picks);
  for (const Pick& pick : picks) Visit(pick, fn);
  return next;
}

}  // namespace goblin
