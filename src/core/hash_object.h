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
#include "core/value_types.h"

namespace goblin {

class HashObject final : public Collection {
 public:
  HashObject() = default;
  explicit HashObject(PackedHash&& hash) : hash_(std::move(hash)) {}

  PackedHash& hash() { return hash_; }
  const PackedHash& hash() const { return hash_; }

  ValueType type() const override { return ValueType::kHash; }
  size_t MemoryUsage() const override;
  std::string_view EncodingName() const override { return hash_.EncodingName(); }
  // Same fields and values in the same form (a small hash stays small whatever the limits).
  Collection* Clone() const override { return new HashObject(hash_.Clone()); }
  size_t Optimize() override { return hash_.Optimize(); }
  // Each field is one unordered element, as in Redis's digest.
  void Digest(ValueDigest* digest) const override;
  void Describe(StatFields* fields) const override;
  // The PackedHash's dump (its Dump/Restore).
  void AppendSnapshotValue(std::string* out, std::string* scratch) const override;
  // The registry's decoder: the dump, re-encoded when the limits now give it another form
  // (as Redis re-encodes what it loads).
  static Collection* DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                    std::string* what);

 private:
  PackedHash hash_;
};

}  // namespace goblin
