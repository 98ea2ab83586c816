// ListObject: the Collection a list key owns, a PackedList in the shell of packed_object.h.
// The PackedList inside is a packed run or a node index; the shell adds only the vtable pointer.
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "core/collection.h"
#include "core/packed_list.h"
#include "core/packed_object.h"
#include "core/value_types.h"

namespace goblin {

class ListObject final : public PackedObject<ListObject, PackedList, ValueType::kList> {
 public:
  ListObject() = default;
  explicit ListObject(PackedList&& list) : PackedObject(std::move(list)) {}

  PackedList& list() { return packed(); }
  const PackedList& list() const { return packed(); }

  // The elements in order: a list's digest depends on their order, as Redis's does.
  void Digest(ValueDigest* digest) const override;
  void Describe(StatFields* fields) const override;
  // The registry's decoder: the dump, in the form the limits now give it.
  static Collection* DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                    std::string* what);
};

// The shell adds the vtable pointer and nothing else.
static_assert(sizeof(ListObject) == sizeof(void*) + sizeof(PackedList));

}  // namespace goblin
