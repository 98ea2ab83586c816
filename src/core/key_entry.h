// KeyEntry: one heap block per key holding the key, its expiry and (for strings) the value.
//
// The keyspace table stores KeyEntry pointers; everything else about a key lives in the
// block, so a string key costs one allocation and no pointers:
//
//   +--------+------------------+-----------+-----------+--------------------------------+
//   | header | expire_ms (8 B)  | key_len   | key bytes | payload                        |
//   | 1 byte | only if bit 7    | varint    |           |                                |
//   +--------+------------------+-----------+-----------+--------------------------------+
//   header bits 0-2: ValueType; bits 3-4: StringEncoding; bit 5: an integer copied by COPY
//   (Redis reports its refcount as 1 rather than that of a shared integer); bit 6: free (a
//   key's access stamp lives in its key table slot, keyspace/database.h); bit 7: has expire
//   payload: kInt    -> int64, 8 bytes
//            kEmbstr / kRaw -> varint length + bytes
//            collection types -> Collection* (8 bytes), owned by the entry
//
// Invariants:
//  1. An entry's key never changes in place. A changed value or expiry produces a new block
//     that the caller stores in the table, except that TryOverwrite rewrites a string value in
//     place when the new one fits the block (SET over a same-sized value, INCR), saving the
//     allocation and the table update.
//  2. kEmbstr and kRaw differ only in the name OBJECT ENCODING reports; Redis calls a string
//     raw once APPEND or SETRANGE touched it or when it is longer than 44 bytes.
//  3. Multi-byte fields are unaligned and read with memcpy.
//  4. A raw string may change length in place (ResizeRawString) while the block's allocation
//     holds it; a block grown for that (GrowForString) keeps headroom as Redis's strings do,
//     so a run of APPENDs or SETRANGEs costs amortized O(appended bytes), not O(value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/collection.h"

namespace goblin {

enum class StringEncoding : uint8_t { kRaw = 0, kInt = 1, kEmbstr = 2 };

// Redis's rule for a string written by SET and friends: integer text that round-trips is kept
// as an integer, short text is "embstr", longer text "raw".
constexpr size_t kEmbstrMaxLength = 44;

// What a new entry holds, besides its key and expiry.
struct EntryValue {
  ValueType type = ValueType::kString;
  StringEncoding encoding = StringEncoding::kRaw;
  std::string_view bytes;        // kEmbstr / kRaw
  int64_t integer = 0;           // kInt
  Collection* object = nullptr;  // collection types; ownership passes to the entry

  static EntryValue String(std::string_view bytes);  // picks the encoding as SET does
  static EntryValue RawString(std::string_view bytes);
  static EntryValue Integer(int64_t value);
  static EntryValue Object(Collection* object);
};

class KeyEntry {
 public:
  KeyEntry() = delete;
  KeyEntry(const KeyEntry&) = delete;
  KeyEntry& operator=(const KeyEntry&) = delete;

  static KeyEntry* Make(std::string_view key, const EntryValue& value,
                        std::optional<int64_t> expire_ms = std::nullopt);
  // Frees the block and the collection it owns.
  static void Destroy(KeyEntry* entry);

  // Rewrites entry's string value and expiry in place when both the old and the new value are
  // strings, the expiry's presence is unchanged and the new layout fits the block without
  // wasting more than half of it. Returns false (entry untouched) otherwise.
  // REQUIRES: value.bytes does not point into entry.
  static bool TryOverwrite(KeyEntry* entry, const EntryValue& value,
                           std::optional<int64_t> expire_ms);

  // WithValue returns the entry that replaces `entry` (which is destroyed): same key.
  static KeyEntry* WithValue(KeyEntry* entry, const EntryValue& value, bool keep_expire);
  // These return a new block holding the same value (the collection moves to it) and leave
  // the old block in place, so the caller can swap pointers before releasing it with
  // FreeBlock (never Destroy: the collection now belongs to the new block).
  static KeyEntry* WithExpire(const KeyEntry* entry, std::optional<int64_t> expire_ms);
  static KeyEntry* WithKey(const KeyEntry* entry, std::string_view key);  // RENAME, MOVE

  // Resizes a kRaw string value in place to `length` bytes (bytes added at the end are zero)
  // and returns its bytes; nullptr, entry untouched, when the value is not kRaw or the block's
  // allocation cannot hold it.
  static char* ResizeRawString(KeyEntry* entry, size_t length);
  // Reallocates entry (a kRaw string) so that ResizeRawString to `length` succeeds, with
  // headroom: twice `length` below 1 MB, 1 MB more above, or room for exactly `room` bytes
  // when given (REQUIRES: room >= length). Returns the block, which may have moved: the caller
  // must store it where the old pointer was (Database::ReserveString).
  static KeyEntry* GrowForString(KeyEntry* entry, size_t length, size_t room = 0);
  static void FreeBlock(KeyEntry* entry);
  // A deep copy under another key (COPY).
  static KeyEntry* Clone(const KeyEntry* entry, std::string_view key, bool keep_expire);

  std::string_view key() const;
  ValueType type() const { return static_cast<ValueType>(header() & 0x7); }
  StringEncoding string_encoding() const {
    return static_cast<StringEncoding>((header() >> 3) & 0x3);
  }
  bool has_expire() const { return header() & kHasExpireBit; }
  bool unshared_int() const { return header() & kUnsharedIntBit; }
  int64_t expire_ms() const;  // REQUIRES: has_expire()

  // The string value as bytes; an integer is formatted into scratch (kInt64TextMax bytes).
  // REQUIRES: type() == kString.
  std::string_view string_value(char* scratch) const;
  // The bytes of a raw string, to change in place while the length stays (a HyperLogLog's
  // registers). REQUIRES: type() == kString and string_encoding() == kRaw.
  char* MutableStringBytes() { return const_cast<char*>(string_value(nullptr).data()); }
  // REQUIRES: string_encoding() == kInt.
  int64_t int_value() const;
  // REQUIRES: type() != kString.
  Collection* object() const;

  // Bytes this key costs: the block (as the allocator rounds it) plus its collection.
  size_t MemoryUsage() const;
  // Redis's OBJECT ENCODING name.
  std::string_view EncodingName() const;

 private:
  static constexpr uint8_t kHasExpireBit = 0x80;
  static constexpr uint8_t kUnsharedIntBit = 0x20;

  uint8_t header() const { return *reinterpret_cast<const uint8_t*>(this); }
  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(this); }
  const uint8_t* key_start() const { return bytes() + 1 + (has_expire() ? 8 : 0); }
  const uint8_t* payload() const;
};

// The keyspace table's view of an entry.
struct KeyOfEntry {
  std::string_view operator()(const KeyEntry* entry) const { return entry->key(); }
};

}  // namespace goblin
