#include "core/list_object.h"

#include "core/value_digest.h"

namespace goblin {

void ListObject::Digest(ValueDigest* digest) const {
  list().ForEach(0, list().size(), [&](std::string_view element) { digest->Mix(element); });
}

void ListObject::Describe(StatFields* fields) const {
  const ListStats s = list().Stats();
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
