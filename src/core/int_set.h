// IntSet: the small form of a set whose members are all integers, as Redis's intset: a sorted
// array of fixed-width integers, searched by binary search. Redis keeps a set in it while every
// member is an integer and it has at most set-max-intset-entries (512) members (the caller
// enforces both), and lists it in ascending order, as this does.
//
//   +-----------+-----------+------------------------------------------------+
//   | count u32 | width u32 | values, `width` bytes each, little-endian,     |
//   |           | (2, 4, 8) | strictly ascending                             |
//   +-----------+-----------+------------------------------------------------+
//   one malloc resized to the bytes in use; an empty set holds no block. The width grows to
//   fit the widest value ever added and never shrinks (as in Redis).
//
// Invariants:
//  1. block_ == nullptr iff count == 0.
//  2. Values are strictly ascending and each fits `width` bytes.
//
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace goblin {

class IntSet {
 public:
  IntSet() = default;
  ~IntSet();
  IntSet(IntSet&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
  IntSet& operator=(IntSet&& other) noexcept;
  IntSet(const IntSet&) = delete;
  IntSet& operator=(const IntSet&) = delete;

  IntSet Clone() const;

  size_t size() const { return block_ == nullptr ? 0 : header()->count; }
  // Bytes per value (2 when empty).
  size_t width() const { return block_ == nullptr ? 2 : header()->width; }

  bool Contains(int64_t v) const;
  // Adds v; returns false when present.
  bool Insert(int64_t v);
  // Removes v; returns false when absent.
  bool Erase(int64_t v);
  // The value at rank i (ascending). REQUIRES: i < size().
  int64_t At(size_t i) const;

  // Bytes allocated.
  size_t MemoryUsage() const;
  // Reallocates to the bytes in use; returns bytes saved.
  size_t Shrink();

  std::string_view Validate() const;

 private:
  struct Header {
    uint32_t count;
    uint32_t width;
  };
  static constexpr size_t kHeaderBytes = sizeof(Header);

  Header* header() { return reinterpret_cast<Header*>(block_); }
  const Header* header() const { return reinterpret_cast<const Header*>(block_); }
  // Rank of the first value >= v.
  size_t LowerBound(int64_t v) const;
  void Store(size_t i, int64_t v);
  void Resize(size_t count, size_t width);

  uint8_t* block_ = nullptr;
};

}  // namespace goblin
