// goblin::PackedHash: the value behind a Redis hash key, with no protocol code. The hash
// commands (HSET, HGET, HINCRBY, HRANDFIELD, HSCAN, ...) are written against this class only.
//
// Two forms, as in Redis 7.2:
//   small  PackedRun<2> (packed_run.h): one block of [field][value] cells in insertion order,
//          searched linearly, while the hash has at most HashLimits::max_listpack_entries
//          fields and no field or value longer than max_listpack_value bytes.
//          OBJECT ENCODING says "listpack".
//   large  PagedTable (paged_table.h): [field][value] entries in 8 KB pages plus an index of
//          5-byte slots: 39.6 bytes per field for 16-byte fields and values (Redis: ~80).
//          OBJECT ENCODING says "hashtable"; Stats() tells the truth ("paged-table").
// A hash moves to the large form when a write breaks a limit (hashTypeSet, or before a
// multi-field write with PrepareForInsert, as hashTypeTryConversion does) and never moves back.
//
// Fields and values that look like integers (ParseInt64 accepts them) are stored as integers
// in both forms and read back as the same text (packed_cell.h): the "online users" hash of 1M
// integer user ids -> unix times costs 14.3 bytes per field (Redis: ~63). Text of integers is
// formatted into buffers the caller provides (Get) or into the callback's own (ForEach, Scan, ...).
//
// Field deadlines (Redis 7.4's HEXPIRE family) ride on the value cells (packed_cell.h: a 7-byte
// prefix), so a field without one costs nothing more. The hash keeps, in a small block made the
// first time a deadline command touches it (expiry_), how many fields carry one and a time no
// later than the earliest. That block is what Redis calls the "listpackex" encoding of a small
// hash: made by any H*EXPIRE on the key, kept until the key goes. The hash never hides or
// deletes an expired field on its own: the commands decide (lazy expiry), and DeleteExpired
// reclaims them (active expiry).
//
// Invariants:
//  1. Exactly one form is live: large_ != nullptr means the large form, and small_ is empty.
//  2. In the small form size() <= the max_listpack_entries in force when fields were added.
//  3. expiry_->count is the number of value cells with a deadline; none has one without
//     expiry_, and expiry_->earliest <= every deadline stored.
//
// Not thread-safe. String views handed out are valid until the next mutation; no argument may
// point into the hash it is passed to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/packed_cell.h"
#include "core/packed_run.h"
#include "core/paged_table.h"

namespace goblin {

// The conversion thresholds (hash-max-listpack-entries / hash-max-listpack-value).
struct HashLimits {
  size_t max_listpack_entries = 128;
  size_t max_listpack_value = 64;
};

class PackedHash {
 public:
  enum class Encoding { kListpack, kHashtable };

  PackedHash();
  ~PackedHash();
  PackedHash(PackedHash&&) noexcept;
  PackedHash& operator=(PackedHash&&) noexcept;
  PackedHash(const PackedHash&) = delete;
  PackedHash& operator=(const PackedHash&) = delete;

  // A deep copy in the same form (COPY).
  PackedHash Clone() const;

  size_t size() const { return large_ ? large_->size() : small_.size(); }
  bool empty() const { return size() == 0; }
  Encoding encoding() const { return large_ ? Encoding::kHashtable : Encoding::kListpack; }
  // "listpack", "listpackex" (the small form with the expiry block) or "hashtable", as OBJECT
  // ENCODING replies.
  const char* EncodingName() const {
    return large_ ? "hashtable" : expiry_ ? "listpackex" : "listpack";
  }

  // Sets field to value; returns true when the field was added, false when it existed (its
  // value is replaced, and its deadline cleared as HSET does, or kept with keep_deadline as
  // HINCRBY does). As Redis's hashTypeSet: in the small form, converts first when field or
  // value is longer than limits.max_listpack_value, and after adding when size() exceeds
  // limits.max_listpack_entries.
  bool Set(std::string_view field, std::string_view value, const HashLimits& limits,
           bool keep_deadline = false);

  // Redis's hashTypeTryConversion, before a write of several fields (HSET, HMSET): converts
  // to the large form when it brings more than max_listpack_entries fields, or an argument
  // longer than max_listpack_value.
  void PrepareForInsert(size_t new_fields, size_t longest_argument, const HashLimits& limits);
  // Moves to the large form now (no-op when already there).
  void ConvertToLarge();

  // The value of field (integers formatted into scratch, kInt64TextMax bytes), or nullopt.
  std::optional<std::string_view> Get(std::string_view field, char* scratch) const;
  bool Contains(std::string_view field) const;
  // HSTRLEN: the length of field's value text, or nullopt.
  std::optional<size_t> ValueLength(std::string_view field) const;
  // Removes field; returns whether it was present.
  bool Delete(std::string_view field);

  // fn(std::string_view field, std::string_view value) for every field: insertion order in
  // the small form (as Redis), page order in the large one.
  template <typename Fn>
  void ForEach(Fn&& fn) const;

  // HRANDFIELD with a negative count: fn(field, value) `count` times, each field drawn
  // independently and (nearly) uniformly. REQUIRES: !empty() or count == 0.
  template <typename Fn>
  void RandomWithRepetition(size_t count, uint64_t* random_state, Fn&& fn) const;
  // HRANDFIELD with a positive count: fn(field, value) for min(count, size()) distinct fields
  // drawn uniformly, in random order.
  template <typename Fn>
  void RandomDistinct(size_t count, uint64_t* random_state, Fn&& fn) const;

  // HSCAN: calls fn(field, value) for the fields at or after cursor and returns the next
  // cursor, 0 when done; `count` is a hint (at least that many when there are). The small
  // form reports everything and returns 0, as Redis does for listpacks. Every field present
  // for a whole scan is reported exactly once, whatever grows or shrinks between calls.
  template <typename Fn>
  uint64_t Scan(uint64_t cursor, size_t count, Fn&& fn) const;

  // ---- Field deadlines ----

  // Whether a deadline command ever touched the hash (the small form is then "listpackex").
  bool has_field_expiry() const { return expiry_ != nullptr; }
  // Makes the expiry block (no-op when present).
  void EnableFieldExpiry();
  // Fields that carry a deadline.
  size_t fields_with_deadline() const { return expiry_ ? expiry_->count : 0; }
  // A time no later than the earliest deadline; 0 when no field has one.
  int64_t earliest_deadline_bound() const {
    return expiry_ && expiry_->count > 0 ? expiry_->earliest : 0;
  }
  // field's deadline in unix ms: nullopt when the field is absent, 0 when it has none.
  std::optional<int64_t> Deadline(std::string_view field) const;
  // Gives field the deadline (1..kMaxCellDeadline), or clears it with 0; false when the field
  // is absent. Makes the expiry block when needed.
  bool SetDeadline(std::string_view field, int64_t deadline_ms);

  struct ExpirySweep {
    size_t deleted = 0;
    bool round_done = false;  // every field was looked at since the round began
  };
  // Active expiry: deletes fields whose deadline is before now_ms, calling
  // fn(std::string_view field) before each goes. The small form looks at every field at once;
  // the large one at about max_entries more each call, going round the table with a cursor
  // kept in the expiry block. Whenever a round ends the earliest deadline is known exactly
  // again, so a hash whose deadlines are all distant is not walked until the first is due.
  template <typename Fn>
  ExpirySweep DeleteExpired(int64_t now_ms, size_t max_entries, Fn&& fn);

  // fn(field, value, deadline_ms) for every field, deadline 0 for none, in ForEach's order.
  template <typename Fn>
  void ForEachWithDeadline(Fn&& fn) const;

  // Bytes allocated for this hash, the object itself included (MEMORY USAGE).
  size_t MemoryUsage() const;
  // Repacks to the tightest form; returns bytes saved. The large form is rebuilt in one pass
  // (briefly two copies).
  size_t Optimize();
  PackedStats Stats() const;
  // Checks every invariant; "" when sound. O(n); for tests.
  std::string Validate() const;

  // Bulk building, for loaders of hashes too large for the small form: BeginBulkLoad empties
  // the hash into the large form, BulkAppend adds a field without looking it up, and
  // EndBulkLoad checks that no field came twice (false: the hash holds garbage and must be
  // dropped) and builds the index. Nothing else may be called in between.
  void BeginBulkLoad();
  void BulkAppend(const CellInput& field, const CellInput& value);
  bool EndBulkLoad();

  // Appends the hash to *out in a self-describing format that Restore reads back in the same
  // form: [u8 form][varint count][entries as stored]. Large hashes dump their pages' live
  // entries as they lie, small ones their block.
  void Dump(std::string* out) const;
  // Rebuilds a hash from Dump's bytes (in one pass for the large form: no index growth).
  // Returns false, leaving *out empty, when the bytes are truncated, malformed, or hold a field
  // twice.
  static bool Restore(std::string_view data, PackedHash* out);

 private:
  // Entry pointers, valid until the next mutation.
  const uint8_t* FindEntry(const CellInput& field) const;
  void RandomEntries(size_t count, bool distinct, uint64_t* random_state,
                     std::vector<const uint8_t*>* out) const;
  uint64_t ScanEntries(uint64_t cursor, size_t count, std::vector<const uint8_t*>* out) const;
  template <typename Fn>
  static void Visit(const uint8_t* entry, Fn& fn);

  // Adjusts expiry_ for a value cell that goes from old_deadline to new_deadline (0: none).
  void CountDeadline(int64_t old_deadline, int64_t new_deadline);
  // Deletes the entry that starts at `entry` (a pointer from FindEntry or a walk), keeping
  // expiry_'s count.
  void DeleteEntry(const uint8_t* entry);

  struct FieldExpiry {
    size_t count = 0;
    int64_t earliest = 0;  // meaningful when count > 0
    // DeleteExpired's round over the large form: where it goes on, and the earliest deadline
    // seen (or given, by CountDeadline) since the round began.
    uint64_t cursor = 0;
    int64_t round_earliest = kMaxCellDeadline;
  };

  PackedRun<2> small_;
  std::unique_ptr<PagedTable> large_;
  std::unique_ptr<FieldExpiry> expiry_;
};

template <typename Fn>
void PackedHash::Visit(const uint8_t* entry, Fn& fn) {
  char field_scratch[kInt64TextMax];
  char value_scratch[kInt64TextMax];
  CellView field, value;
  DecodeCell(DecodeCell(entry, &field), &value);
  fn(field.Text(field_scratch), value.Text(value_scratch));
}

template <typename Fn>
void PackedHash::ForEachWithDeadline(Fn&& fn) const {
  auto visit = [&](const uint8_t* entry) {
    char field_scratch[kInt64TextMax];
    char value_scratch[kInt64TextMax];
    CellView field, value;
    DecodeCell(DecodeCell(entry, &field), &value);
    fn(field.Text(field_scratch), value.Text(value_scratch), value.deadline_ms);
  };
  if (large_) {
    large_->ForEach(visit);
  } else {
    small_.ForEach(visit);
  }
}

template <typename Fn>
PackedHash::ExpirySweep PackedHash::DeleteExpired(int64_t now_ms, size_t max_entries, Fn&& fn) {
  ExpirySweep sweep;
  if (fields_with_deadline() == 0) {
    sweep.round_done = true;
    return sweep;
  }
  std::vector<const uint8_t*> entries;
  if (expiry_->cursor == 0) expiry_->round_earliest = kMaxCellDeadline;
  if (large_) {
    std::vector<EntryRef> refs;
    expiry_->cursor = large_->Scan(expiry_->cursor, max_entries, &refs);
    for (EntryRef ref : refs) entries.push_back(large_->EntryAt(ref));
  } else {
    small_.ForEach([&](const uint8_t* entry) { entries.push_back(entry); });
  }
  // Expired fields are collected first (as text: deleting moves the others), then deleted.
  std::vector<std::string> expired;
  for (const uint8_t* entry : entries) {
    const int64_t deadline = CellDeadline(SkipCell(entry));
    if (deadline == 0) continue;
    if (deadline >= now_ms) {
      expiry_->round_earliest = std::min(expiry_->round_earliest, deadline);
      continue;
    }
    char scratch[kInt64TextMax];
    CellView field;
    DecodeCell(entry, &field);
    expired.emplace_back(field.Text(scratch));
  }
  for (const std::string& field : expired) {
    fn(std::string_view(field));
    DeleteEntry(FindEntry(CellInput::Of(field)));
    ++sweep.deleted;
  }
  if (!large_ || expiry_->cursor == 0) {
    expiry_->cursor = 0;
    expiry_->earliest = expiry_->round_earliest;
    sweep.round_done = true;
  }
  return sweep;
}

template <typename Fn>
void PackedHash::ForEach(Fn&& fn) const {
  if (large_) {
    large_->ForEach([&](const uint8_t* entry) { Visit(entry, fn); });
  } else {
    small_.ForEach([&](const uint8_t* entry) { Visit(entry, fn); });
  }
}

template <typename Fn>
void PackedHash::RandomWithRepetition(size_t count, uint64_t* random_state, Fn&& fn) const {
  std::vector<const uint8_t*> entries;
  RandomEntries(count, false, random_state, &entries);
  for (const uint8_t* entry : entries) Visit(entry, fn);
}

template <typename Fn>
void PackedHash::RandomDistinct(size_t count, uint64_t* random_state, Fn&& fn) const {
  std::vector<const uint8_t*> entries;
  RandomEntries(count, true, random_state, &entries);
  for (const uint8_t* entry : entries) Visit(entry, fn);
}

template <typename Fn>
uint64_t PackedHash::Scan(uint64_t cursor, size_t count, Fn&& fn) const {
  std::vector<const uint8_t*> entries;
  const uint64_t next = ScanEntries(cursor, count, &entries);
  for (const uint8_t* entry : entries) Visit(entry, fn);
  return next;
}

}  // namespace goblin
