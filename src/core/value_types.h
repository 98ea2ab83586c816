// The value-type registry: one row per type a key can hold, the half of the value-type
// contract that exists before a value does (collection.h is the other half).
//
// A row gives the type's name as TYPE reports it (and SCAN ... TYPE and the snapshot checker
// read it), its snapshot tag and the decoder of its snapshot value. The tag is the type's
// number in the snapshot format (docs/FORMAT.md), fixed forever: a file written today must
// read the same after the enum or the table is reordered (value_types_test.cc pins each tag).
//
// Strings have a row but no decoder: their value lives inline in the key entry, and the
// snapshot format stores it in the key record itself.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/collection.h"
#include "core/packed_hash.h"
#include "core/packed_list.h"
#include "core/packed_set.h"
#include "core/sorted_set.h"
#include "core/stream.h"

namespace goblin {

// The configured small-encoding thresholds (zset-max-listpack-*, hash-max-listpack-*,
// set-max-*, list-max-listpack-size, stream-node-max-*) that decoders apply, so a loaded value
// takes the form a command would give it.
struct EncodingLimits {
  ZsetLimits zset;
  HashLimits hash;
  SetLimits set;
  ListLimits list;
  Stream::Limits stream;
};

struct ValueTypeInfo {
  ValueType type;
  std::string_view name;  // TYPE's reply: "string", "list", "set", "zset", "hash"
  uint8_t snapshot_tag;   // the type's number in the snapshot's key records
  // The value whose snapshot bytes (inside their length prefix) are `bytes`, or nullptr with
  // *what saying why not. nullptr for strings.
  Collection* (*decode_snapshot)(std::string_view bytes, const EncodingLimits& limits,
                                 std::string* what);
};

// Every row, in the order TYPE's documentation lists the types.
std::span<const ValueTypeInfo> ValueTypes();
// REQUIRES: type is a registered type (every ValueType enumerator is).
const ValueTypeInfo& InfoOf(ValueType type);
// The row named name (ASCII case-insensitive), or nullptr.
const ValueTypeInfo* ValueTypeNamed(std::string_view name);
// The row with that snapshot tag, or nullptr.
const ValueTypeInfo* ValueTypeWithSnapshotTag(uint8_t tag);

}  // namespace goblin
