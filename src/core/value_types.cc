#include "core/value_types.h"

#include <cstdlib>

#include "core/ascii.h"
#include "core/hash_object.h"
#include "core/list_object.h"
#include "core/set_object.h"
#include "core/stream_object.h"
#include "core/zset_object.h"

namespace goblin {

namespace {

// Registering a type is one row here. Tags are on disk: never change or reuse one.
constexpr ValueTypeInfo kValueTypes[] = {
    {ValueType::kString, "string", 0, nullptr},
    {ValueType::kList, "list", 1, &ListObject::DecodeSnapshot},
    {ValueType::kSet, "set", 2, &SetObject::DecodeSnapshot},
    {ValueType::kZSet, "zset", 3, &ZsetObject::DecodeSnapshot},
    {ValueType::kHash, "hash", 4, &HashObject::DecodeSnapshot},
    {ValueType::kStream, "stream", 5, &StreamObject::DecodeSnapshot},
};

}  // namespace

std::span<const ValueTypeInfo> ValueTypes() { return kValueTypes; }

const ValueTypeInfo& InfoOf(ValueType type) {
  for (const ValueTypeInfo& info : kValueTypes) {
    if (info.type == type) return info;
  }
  std::abort();  // an enumerator without a row: the registry is incomplete
}

const ValueTypeInfo* ValueTypeNamed(std::string_view name) {
  for (const ValueTypeInfo& info : kValueTypes) {
    if (EqualsIgnoreCase(name, info.name)) return &info;
  }
  return nullptr;
}

const ValueTypeInfo* ValueTypeWithSnapshotTag(uint8_t tag) {
  for (const ValueTypeInfo& info : kValueTypes) {
    if (info.snapshot_tag == tag) return &info;
  }
  return nullptr;
}

}  // namespace goblin
