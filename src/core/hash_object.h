// HashObject: the Collection a hash key owns, a thin shell around goblin::PackedHash.
//
// The keyspace frees, copies and measures values through Collection; the hash commands reach
// the PackedHash inside through hash(). The shell adds 8 bytes (the vtable pointer) to the
// PackedHash it holds:
//
//   KeyEntry payload --> +---------+--------------------------------------------+
//                        | vtable  | PackedHash (packed run | paged table ptr)  |
//                        +---------+--------------------------------------------+
//
// Invariants:
//  1. A HashObject stored under a key is never empty: the command that removes its last field
//     deletes the key (as Redis deletes empty keys).
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

#include "core/collection.h"
#include "core/packed_hash.h"

namespace goblin {

class HashObject final : public Collection {
 public:
  HashObject() = default;
  explicit HashObject(PackedHash&& hash) : hash_(std::move(hash)) {}

  PackedHash& hash() { return hash_; }
  const PackedHash& hash() const { return hash_; }

  size_t MemoryUsage() const override;
  std::string_view EncodingName() const override { return hash_.EncodingName(); }
  // Same fields and values in the same form (a small hash stays small whatever the limits).
  Collection* Clone() const override { return new HashObject(hash_.Clone()); }
  size_t Optimize() override { return hash_.Optimize(); }

 private:
  PackedHash hash_;
};

}  // namespace goblin
