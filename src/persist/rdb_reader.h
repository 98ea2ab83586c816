// RdbReadValue: one value of Redis's RDB format decoded into what a key holds. The file loader
// (rdb_loader.h) calls it for every key record, RESTORE for the body of a DUMP payload; both
// get bytes nobody vouches for, so every byte is checked before it is trusted, as Redis checks
// them with sanitize-dump-payload yes (and more: Goblin's structures need sorted, distinct,
// consistent contents, so nothing is taken on faith that Redis would only assume):
//
//   - lengths and counts against the bytes that remain, so a lying length fails at once and
//     allocates nothing;
//   - every container whole (rdb_containers.h): listpack, ziplist, zipmap and intset headers,
//     encodings, links and counts; intsets strictly ascending;
//   - no member of a set, field of a hash or member of a sorted set twice; no NaN score;
//   - streams: node keys of 16 bytes, each node's master entry and entries as Redis lays them
//     out (flags, field counts, element counts), ids strictly ascending across the stream, above
//     0-0 and at most the last id, the live count equal to the stream's length, the deleted
//     count to the entries marked deleted; groups, consumers and pending entries distinct and
//     ascending, every pending entry owned by exactly one consumer.
//
// Values take the form Redis 7.2 gives what it loads under the encoding limits in force: a set
// written as a hashtable that fits an intset or a listpack loads as one, a listpack past the
// entry limit loads large, a list becomes a listpack when the file held it in one node that
// fits (DESIGN.md, "Persistence").
//
// The types read (rdb_format.h): string 0; list 1, 10, 14, 18 (plain and packed nodes); set 2,
// 11, 20; sorted set 3, 5, 12, 17; hash 4, 9, 13, 16, and 7.4's hashes with field deadlines 22
// to 25; stream 15, 19, 21. Refused with an error that names them: modules 6 and 7 (the
// module's type name, as Redis spells it from the module id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/collection.h"
#include "core/key_entry.h"
#include "core/value_types.h"

namespace goblin {

// A decoded value, owning its bytes (a string) or its collection until Take hands it over.
class RdbValue {
 public:
  RdbValue() = default;
  RdbValue(RdbValue&&) noexcept = default;
  RdbValue& operator=(RdbValue&&) noexcept = default;
  RdbValue(const RdbValue&) = delete;
  RdbValue& operator=(const RdbValue&) = delete;

  ValueType type() const { return type_; }
  // The value as KeyEntry::Make and Database::AddNew / Put take it. A string's bytes stay
  // in this RdbValue (keep it until the entry is made, which copies them); a collection
  // passes to the caller, who must give it to an entry or delete it.
  // REQUIRES: called once, after RdbReadValue succeeded.
  EntryValue Take();
  // Drops the hash fields whose deadline is before now_ms, as Redis 7.4 loads a file or a
  // RESTORE payload where it is not a replica; false when no field is left (the key is then
  // skipped, or the payload refused). REQUIRES: RdbReadValue succeeded, Take not yet called.
  bool DropExpiredFields(int64_t now_ms);

 private:
  friend class RdbValueDecoder;

  ValueType type_ = ValueType::kString;
  std::string string_;
  std::unique_ptr<Collection> object_;
};

struct RdbReadError {
  size_t offset = 0;  // where in data the problem is
  std::string what;   // what is wrong, for "<file>: offset <n>: <what>"
  // The bytes are sound but the value holds no element (an empty list, set, sorted set or
  // hash). Redis skips such a key when it loads a file and refuses it in RESTORE.
  bool empty = false;
};

// Decodes the value of RDB value type `type` that starts at data[*pos] (the bytes after the
// type byte, and after the key in a file's record). On success *value holds it and *pos is
// just past it; else false with *error filled in, *pos just past the value when error->empty
// (a file loader skips it) and unspecified otherwise.
bool RdbReadValue(uint8_t type, std::string_view data, size_t* pos, const EncodingLimits& limits,
                  RdbValue* value, RdbReadError* error);

// Whether a record's type byte names a value (of any type Redis defines, read here or not)
// rather than an opcode or nothing.
bool RdbIsValueType(uint8_t type);

// A module type's 9-character name, as Redis spells it from the 64-bit module id (the high 54
// bits, 6 per character); the low 10 bits are the module's encoding version.
std::string RdbModuleTypeName(uint64_t module_id);

}  // namespace goblin
