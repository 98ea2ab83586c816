// SetObject: the Collection a set key owns, a PackedSet in the shell of packed_object.h.
// The PackedSet inside is an intset, a packed run or a paged table pointer; the shell adds only the
// vtable pointer.
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "core/collection.h"
#include "core/packed_object.h"
#include "core/packed_set.h"
#include "core/value_types.h"

namespace goblin {

class SetObject final : public PackedObject<SetObject, PackedSet, ValueType::kSet> {
 public:
  SetObject() = default;
  explicit SetObject(PackedSet&& set) : PackedObject(std::move(set)) {}

  PackedSet& set() { return packed(); }
  const PackedSet& set() const { return packed(); }

  // Each member is one unordered element, as in Redis's digest.
  void Digest(ValueDigest* digest) const override;
  void Describe(StatFields* fields) const override;
  // The registry's decoder: the dump, re-encoded when the limits now give it another form
  // (as Redis re-encodes what it loads).
  static Collection* DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                    std::string* what);
};

// The shell adds the vtable pointer and nothing else.
static_assert(sizeof(SetObject) == sizeof(void*) + sizeof(PackedSet));

}  // namespace goblin
