// The small form of a sorted set: one packed run in one allocation, searched linearly.
//
// Redis calls this encoding "listpack" and keeps sets in it while they have at most
// zset-max-listpack-entries members (128) of at most zset-max-listpack-value bytes (64); a
// linear scan of a few kilobytes beats any pointer structure there, and the set costs little
// more than its data. Goblin keeps the same limits (the caller passes them) and the same name.
//
//   +-----------+-----------+-------------------------------------------------------+
//   | count u32 | used u32  | packed run (zset_packed.h): delta key, length, member  |
//   +-----------+-----------+-------------------------------------------------------+
//   one malloc, grown and shrunk with realloc to the bytes in use; empty set: no allocation.
//
// Invariants:
//  1. block_ == nullptr iff the set is empty.
//  2. capacity_ is the payload the allocation can hold (its usable size minus the header).
//  3. The run obeys the invariants of zset_packed.h.
//
// Not thread-safe. Views returned by const methods are valid until the next mutation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/zset_packed.h"

namespace goblin {

class ZsetListpack {
 public:
  ZsetListpack() = default;
  ~ZsetListpack();
  ZsetListpack(ZsetListpack&& other) noexcept;
  ZsetListpack& operator=(ZsetListpack&& other) noexcept;
  ZsetListpack(const ZsetListpack&) = delete;
  ZsetListpack& operator=(const ZsetListpack&) = delete;

  size_t size() const { return block_ == nullptr ? 0 : header()->count; }
  const uint8_t* data() const { return block_ == nullptr ? nullptr : block_ + kHeaderBytes; }
  size_t used_bytes() const { return block_ == nullptr ? 0 : header()->used; }
  size_t capacity_bytes() const { return capacity_; }

  bool Find(std::string_view member, ZsetRunPosition* pos, ZsetEntry* entry) const;

  // Adds a member that is not present. REQUIRES: member absent, not pointing into this set.
  void InsertNew(uint64_t key, bool negative_zero, std::string_view member);

  // Removes `n` entries starting at rank `first`. REQUIRES: first + n <= size().
  void EraseAt(size_t first, size_t n);

  size_t CountBelowKey(uint64_t key, bool inclusive) const;
  // Scans from the front for the first member not below the bound, as Redis's listpack code
  // does; exact when all scores are equal.
  size_t CountBelowMember(std::string_view member, bool inclusive) const;

  ZsetEntry EntryAt(size_t rank) const;

  // Reallocates to exactly the bytes in use; returns bytes saved.
  size_t Shrink();

  // Bytes allocated.
  size_t MemoryUsage() const;

 private:
  static constexpr size_t kHeaderBytes = 8;
  struct Header {
    uint32_t count;
    uint32_t used;
  };
  Header* header() { return reinterpret_cast<Header*>(block_); }
  const Header* header() const { return reinterpret_cast<const Header*>(block_); }
  uint8_t* payload() { return block_ + kHeaderBytes; }
  void Resize(size_t payload_bytes);

  uint8_t* block_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace goblin
