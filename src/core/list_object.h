// ListObject: the Collection a list key owns, a thin shell around goblin::PackedList.
//
// The keyspace frees, copies and measures values through Collection; the list commands reach
// the PackedList inside through list(). The shell adds 8 bytes (the vtable pointer) to the
// PackedList it holds:
//
//   KeyEntry payload --> +---------+----------------------------------------+
//                        | vtable  | PackedList (packed run | node index)   |
//                        +---------+----------------------------------------+
//
// Invariants:
//  1. A ListObject stored under a key is never empty: the command that removes its last
//     element deletes the key (as Redis deletes empty keys).
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

#include "core/collection.h"
#include "core/packed_list.h"
#include "core/value_types.h"

namespace goblin {

class ListObject final : public Collection {
 public:
  ListObject() = default;
  explicit ListObject(PackedList&& list) : list_(std::move(list)) {}

  PackedList& list() { return list_; }
  const PackedList& list() const { return list_; }

  ValueType type() const override { return ValueType::kList; }
  size_t MemoryUsage() const override;
  std::string_view EncodingName() const override { return list_.EncodingName(); }
  // Same elements in the same form.
  Collection* Clone() const override { return new ListObject(list_.Clone()); }
  size_t Optimize() override { return list_.Optimize(); }
  // The elements in order: a list's digest depends on their order, as Redis's does.
  void Digest(ValueDigest* digest) const override;
  void Describe(StatFields* fields) const override;
  // The PackedList's dump (its Dump/Restore).
  void AppendSnapshotValue(std::string* out, std::string* scratch) const override;
  // The registry's decoder: the dump, in the form the limits now give it.
  static Collection* DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                    std::string* what);

 private:
  PackedList list_;
};

}  // namespace goblin
