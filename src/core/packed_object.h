// PackedObject: the Collection a hash, set or list key owns, a thin shell around the packed
// structure that holds its elements (PackedHash, PackedSet, PackedList).
//
// The keyspace frees, copies and measures values through Collection; the commands reach the
// structure inside through the derived object's accessor (hash(), set(), list()). The shell
// adds 8 bytes (the vtable pointer) to the structure it holds:
//
//   KeyEntry payload --> +---------+--------------------------------------------+
//                        | vtable  | Packed (packed run | large form)           |
//                        +---------+--------------------------------------------+
//
// The parts every such object does alike live here; a derived object adds its accessor, its
// Digest and Describe, and its snapshot decoder (each type re-encodes what it loads by its own
// rules). Derived is the final class, so Clone makes one and every call through a Derived*
// binds statically.
//
// Requirements on Packed: EncodingName(), Clone(), Optimize(), MemoryUsage() (counting
// sizeof(Packed)) and Dump(std::string*).
//
// Invariants:
//  1. An object stored under a key is never empty: the command that removes its last element
//     deletes the key (as Redis deletes empty keys).
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "core/alloc_size.h"
#include "core/bytes.h"
#include "core/collection.h"

namespace goblin {

template <typename Derived, typename Packed, ValueType kType>
class PackedObject : public Collection {
 public:
  ValueType type() const final { return kType; }
  size_t MemoryUsage() const final {
    // Packed::MemoryUsage counts sizeof(Packed); this block holds it plus the vtable.
    return AllocatedSize(static_cast<const Derived*>(this)) - sizeof(Packed) +
           packed_.MemoryUsage();
  }
  std::string_view EncodingName() const final { return packed_.EncodingName(); }
  // Same elements in the same form (a small value stays small whatever the limits now are).
  Collection* Clone() const final { return new Derived(packed_.Clone()); }
  size_t Optimize() final { return packed_.Optimize(); }
  // The structure's dump (its Dump/Restore), length-prefixed.
  void AppendSnapshotValue(std::string* out, std::string* scratch) const final {
    scratch->clear();
    packed_.Dump(scratch);
    AppendLengthPrefixed(out, *scratch);
  }

 protected:
  PackedObject() = default;
  explicit PackedObject(Packed&& packed) : packed_(std::move(packed)) {}

  Packed& packed() { return packed_; }
  const Packed& packed() const { return packed_; }

 private:
  Packed packed_;
};

}  // namespace goblin
