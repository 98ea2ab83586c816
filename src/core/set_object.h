// SetObject: the Collection a set key owns, a thin shell around goblin::PackedSet.
//
// The keyspace frees, copies and measures values through Collection; the set commands reach
// the PackedSet inside through set(). The shell adds 8 bytes (the vtable pointer) to the
// PackedSet it holds:
//
//   KeyEntry payload --> +---------+----------------------------------------------+
//                        | vtable  | PackedSet (intset | packed run | paged table) |
//                        +---------+----------------------------------------------+
//
// Invariants:
//  1. A SetObject stored under a key is never empty: the command that removes its last member
//     deletes the key (as Redis deletes empty keys).
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

#include "core/collection.h"
#include "core/packed_set.h"
#include "core/value_types.h"

namespace goblin {

class SetObject final : public Collection {
 public:
  SetObject() = default;
  explicit SetObject(PackedSet&& set) : set_(std::move(set)) {}

  PackedSet& set() { return set_; }
  const PackedSet& set() const { return set_; }

  ValueType type() const override { return ValueType::kSet; }
  size_t MemoryUsage() const override;
  std::string_view EncodingName() const override { return set_.EncodingName(); }
  // Same members in the same form (a small set stays small whatever the limits now are).
  Collection* Clone() const override { return new SetObject(set_.Clone()); }
  size_t Optimize() override { return set_.Optimize(); }
  // Each member is one unordered element, as in Redis's digest.
  void Digest(ValueDigest* digest) const override;
  void Describe(StatFields* fields) const override;
  // The PackedSet's dump (its Dump/Restore).
  void AppendSnapshotValue(std::string* out, std::string* scratch) const override;
  // The registry's decoder: the dump, re-encoded when the limits now give it another form
  // (as Redis re-encodes what it loads).
  static Collection* DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                    std::string* what);

 private:
  PackedSet set_;
};

}  // namespace goblin
