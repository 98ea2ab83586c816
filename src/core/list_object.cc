#include "core/list_object.h"

#include <malloc.h>

#include "core/bytes.h"
#include "core/value_digest.h"

namespace goblin {

size_t ListObject::MemoryUsage() const {
  // PackedList::MemoryUsage counts sizeof(PackedList); this block holds it plus the vtable.
  return malloc_usable_size(const_cast<ListObject*>(this)) - sizeof(PackedList) +
         list_.MemoryUsage();
}

void ListObject::Digest(ValueDigest* digest) const {
  list_.ForEach(0, list_.size(), [&](std::string_view element) { digest->Mix(element); });
}

void ListObject::Describe(StatFields* fields) const {
  const ListStats s = list_.Stats();
  auto count = [](size_t n) { return static_cast<int64_t>(n); };
  fields->insert(fields->end(), {{"layout", std::string_view(s.layout)},
                                 {"elements", count(s.size)},
                                 {"value_bytes", count(s.bytes)},
                                 {"payload_bytes", count(s.payload_bytes)},
                                 {"capacity_bytes", count(s.capacity_bytes)},
                                 {"fill", s.fill},
                                 {"nodes", count(s.nodes)},
                                 {"compressed_nodes", count(s.compressed_nodes)},
                                 {"index_bytes", count(s.index_bytes)}});
}

void ListObject::AppendSnapshotValue(std::string* out, std::string* scratch) const {
  scratch->clear();
  list_.Dump(scratch);
  AppendLengthPrefixed(out, *scratch);
}

Collection* ListObject::DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                       std::string* what) {
  PackedList list;
  if (!PackedList::Restore(bytes, limits.list, &list) || list.empty()) {
    *what = "malformed list";
    return nullptr;
  }
  return new ListObject(std::move(list));
}

}  // namespace goblin
