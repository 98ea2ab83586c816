#include "core/stream_object.h"

#include <malloc.h>

#include "core/bytes.h"
#include "core/value_digest.h"

namespace goblin {

size_t StreamObject::MemoryUsage() const {
  // Stream::MemoryUsage counts sizeof(Stream); this block holds it plus the vtable.
  return malloc_usable_size(const_cast<StreamObject*>(this)) - sizeof(Stream) +
         stream_.MemoryUsage();
}

void StreamObject::Digest(ValueDigest* digest) const {
  stream_.Range(StreamId::Min(), StreamId::Max(), false, 0, [&](const StreamEntryView& entry) {
    digest->Mix(entry.id.ToString());
    for (const auto& [field, value] : entry.fields) {
      digest->Mix(field);
      digest->Mix(value);
    }
    return true;
  });
  digest->Mix(stream_.last_id().ToString());
}

void StreamObject::Describe(StatFields* fields) const {
  auto count = [](size_t n) { return static_cast<int64_t>(n); };
  fields->insert(fields->end(), {{"layout", std::string_view("packed nodes")},
                                 {"entries", count(stream_.size())},
                                 {"nodes", count(stream_.node_count())}});
}

void StreamObject::AppendSnapshotValue(std::string* out, std::string* scratch) const {
  scratch->clear();
  stream_.Dump(scratch);
  AppendLengthPrefixed(out, *scratch);
}

Collection* StreamObject::DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                         std::string* what) {
  Stream stream(Stream::Limits{limits.stream.max_node_bytes, limits.stream.max_node_entries});
  if (!Stream::Restore(bytes, &stream)) {
    *what = "malformed stream";
    return nullptr;
  }
  return new StreamObject(std::move(stream));
}

}  // namespace goblin
