// PackedRun: the small form of a hash (kCells = 2: field, value) or a set (kCells = 1:
// member), what Redis calls a listpack: one block, entries back to back in insertion order,
// searched linearly. Redis keeps hashes in it up to hash-max-listpack-entries (512) fields of
// at most hash-max-listpack-value (64) bytes, sets up to set-max-listpack-entries (128); a
// scan of a few kilobytes beats any index there, and the collection costs its data plus 8
// bytes. The caller enforces the limits.
//
//   +-----------+----------+---------------------------------------------------+
//   | count u32 | used u32 | entry entry entry ...  (cells, packed_cell.h)     |
//   +-----------+----------+---------------------------------------------------+
//   one malloc, resized with realloc to the bytes in use (inside a size class that does not
//   move); an empty run holds no block.
//
// Order is Redis's: a new entry is appended, a value update stays in place, a deletion closes
// the gap, so HGETALL and SMEMBERS of a small collection list it as Redis does.
//
// Invariants:
//  1. block_ == nullptr iff count == 0.
//  2. [data, data + used) is exactly `count` entries of kCells cells each.
//
// Not thread-safe. Pointers into the run are valid until the next mutation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "core/alloc_size.h"
#include "core/packed_cell.h"

namespace goblin {

template <int kCells>
class PackedRun {
 public:
  static_assert(kCells == 1 || kCells == 2);
  static constexpr uint32_t kNotFound = ~uint32_t{0};

  PackedRun() = default;
  ~PackedRun() { std::free(block_); }
  PackedRun(PackedRun&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  PackedRun& operator=(PackedRun&& other) noexcept {
    if (this != &other) {
      std::free(block_);
      block_ = std::exchange(other.block_, nullptr);
    }
    return *this;
  }
  PackedRun(const PackedRun&) = delete;
  PackedRun& operator=(const PackedRun&) = delete;

  // A deep copy.
  PackedRun Clone() const {
    PackedRun copy;
    if (block_ != nullptr) {
      copy.block_ = static_cast<uint8_t*>(CheckedMalloc(kHeaderBytes + used_bytes()));
      std::memcpy(copy.block_, block_, kHeaderBytes + used_bytes());
    }
    return copy;
  }

  size_t size() const { return block_ == nullptr ? 0 : header()->count; }
  size_t used_bytes() const { return block_ == nullptr ? 0 : header()->used; }
  const uint8_t* data() const { return block_ == nullptr ? nullptr : block_ + kHeaderBytes; }
  const uint8_t* end() const { return data() + used_bytes(); }
  size_t capacity_bytes() const {
    return block_ == nullptr ? 0 : AllocatedSize(block_) - kHeaderBytes;
  }

  static size_t EntrySize(const uint8_t* entry) {
    const uint8_t* p = SkipCell(entry);
    if (kCells == 2) p = SkipCell(p);
    return static_cast<size_t>(p - entry);
  }

  // Offset of the entry whose first cell holds key, or kNotFound.
  uint32_t Find(const CellInput& key) const {
    const uint8_t* p = data();
    const uint8_t* last = end();
    while (p < last) {
      if (CellMatches(p, key)) return static_cast<uint32_t>(p - data());
      p = SkipCell(p);
      if (kCells == 2) p = SkipCell(p);
    }
    return kNotFound;
  }

  const uint8_t* EntryAt(uint32_t offset) const { return data() + offset; }

  // Appends an entry. REQUIRES: value given iff kCells == 2; no argument points into the run.
  void Append(const CellInput& key, const CellInput* value) {
    const size_t bytes = key.EncodedSize() + (value != nullptr ? value->EncodedSize() : 0);
    const uint32_t used = static_cast<uint32_t>(used_bytes());
    const uint32_t count = static_cast<uint32_t>(size());
    Resize(used + bytes);
    uint8_t* p = EncodeCell(payload() + used, key);
    if (value != nullptr) EncodeCell(p, *value);
    header()->count = count + 1;
    header()->used = static_cast<uint32_t>(used + bytes);
  }

  // Appends an already encoded entry (a conversion or a load). REQUIRES: complete entry.
  void AppendEncoded(const uint8_t* entry, size_t bytes) {
    const uint32_t used = static_cast<uint32_t>(used_bytes());
    const uint32_t count = static_cast<uint32_t>(size());
    Resize(used + bytes);
    std::memcpy(payload() + used, entry, bytes);
    header()->count = count + 1;
    header()->used = static_cast<uint32_t>(used + bytes);
  }

  // Rewrites the value of the entry at offset. REQUIRES: kCells == 2; value does not point
  // into the run.
  void ReplaceValue(uint32_t offset, const CellInput& value) {
    static_assert(kCells == 2 || kCells == 1);
    uint8_t* old_value = SkipCell(payload() + offset);
    const size_t old_size = static_cast<size_t>(SkipCell(old_value) - old_value);
    const size_t new_size = value.EncodedSize();
    const size_t used = used_bytes();
    const size_t at = static_cast<size_t>(old_value - payload());
    const size_t tail = used - at - old_size;
    if (new_size > old_size) Resize(used + new_size - old_size);
    uint8_t* p = payload() + at;
    std::memmove(p + new_size, p + old_size, tail);
    EncodeCell(p, value);
    header()->used = static_cast<uint32_t>(used + new_size - old_size);
    if (new_size < old_size) Resize(header()->used);
  }

  // Removes the entry at offset.
  void EraseAt(uint32_t offset) {
    uint8_t* p = payload() + offset;
    const size_t n = EntrySize(p);
    const size_t used = used_bytes();
    std::memmove(p, p + n, used - offset - n);
    const uint32_t count = static_cast<uint32_t>(size()) - 1;
    if (count == 0) {
      Resize(0);
      return;
    }
    header()->count = count;
    header()->used = static_cast<uint32_t>(used - n);
    Resize(used - n);
  }

  // The offsets of all entries, in order.
  std::vector<uint32_t> Offsets() const {
    std::vector<uint32_t> offsets;
    offsets.reserve(size());
    for (const uint8_t* p = data(); p < end(); p += EntrySize(p)) {
      offsets.push_back(static_cast<uint32_t>(p - data()));
    }
    return offsets;
  }

  // fn(const uint8_t* entry) for every entry in order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const uint8_t* p = data(); p < end(); p += EntrySize(p)) fn(p);
  }

  // Bytes allocated.
  size_t MemoryUsage() const { return AllocatedSize(block_); }

  // Reallocates to exactly the bytes in use; returns bytes saved.
  size_t Shrink() {
    if (block_ == nullptr) return 0;
    const size_t before = MemoryUsage();
    block_ = static_cast<uint8_t*>(CheckedRealloc(block_, kHeaderBytes + used_bytes()));
    const size_t after = MemoryUsage();
    return before > after ? before - after : 0;
  }

 private:
  struct Header {
    uint32_t count;
    uint32_t used;
  };
  static constexpr size_t kHeaderBytes = sizeof(Header);

  Header* header() { return reinterpret_cast<Header*>(block_); }
  const Header* header() const { return reinterpret_cast<const Header*>(block_); }
  uint8_t* payload() { return block_ + kHeaderBytes; }

  // Makes the block hold `payload_bytes` (0 frees it). realloc within a size class is free, so
  // this tracks the bytes in use exactly, as Redis's listpack does.
  void Resize(size_t payload_bytes) {
    if (payload_bytes == 0) {
      std::free(block_);
      block_ = nullptr;
      return;
    }
    const bool fresh = block_ == nullptr;
    if (!fresh && kHeaderBytes + payload_bytes <= AllocatedSize(block_) &&
        SizeClassAtLeast(kHeaderBytes + payload_bytes) == AllocatedSize(block_)) {
      return;
    }
    block_ = static_cast<uint8_t*>(CheckedRealloc(block_, kHeaderBytes + payload_bytes));
    if (fresh) *header() = Header{0, 0};
  }

  uint8_t* block_ = nullptr;
};

}  // namespace goblin
