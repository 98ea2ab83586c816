// HashObject: the Collection a hash key owns, a PackedHash in the shell of packed_object.h.
// The PackedHash inside is a packed run or a paged table pointer; the shell adds only the vtable
// pointer.
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "core/collection.h"
#include "core/packed_hash.h"
#include "core/packed_object.h"
#include "core/value_types.h"

namespace goblin {

class HashObject final : public PackedObject<HashObject, PackedHash, ValueType::kHash> {
 public:
  HashObject() = default;
  explicit HashObject(PackedHash&& hash) : PackedObject(std::move(hash)) {}

  PackedHash& hash() { return packed(); }
  const PackedHash& hash() const { return packed(); }

  // Each field is one unordered element, as in Redis's digest.
  void Digest(ValueDigest* digest) const override;
  void Describe(StatFields* fields) const override;
  bool has_element_deadlines() const override { return hash().fields_with_deadline() > 0; }
  // The registry's decoder: the dump, re-encoded when the limits now give it another form
  // (as Redis re-encodes what it loads).
  static Collection* DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                    std::string* what);
};

// The shell adds the vtable pointer and nothing else.
static_assert(sizeof(HashObject) == sizeof(void*) + sizeof(PackedHash));

}  // namespace goblin
