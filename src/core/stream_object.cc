#include "core/stream_object.h"

#include <malloc.h>

#include "core/bytes.h"
#include "core/value_digest.h"

namespace goblin {

namespace {

// A deep copy of groups through their dump (the groups point into themselves).
std::unique_ptr<StreamGroups> CopyGroups(const StreamGroups& groups) {
  std::string dump;
  groups.Dump(&dump);
  auto copy = std::make_unique<StreamGroups>();
  StreamGroups::Restore(dump, copy.get());
  return copy;
}

}  // namespace

StreamGroups& StreamObject::EnsureGroups() {
  if (groups_ == nullptr) groups_ = std::make_unique<StreamGroups>();
  return *groups_;
}

Collection* StreamObject::Clone() const {
  return new StreamObject(Stream(stream_), groups_ == nullptr ? nullptr : CopyGroups(*groups_));
}

size_t StreamObject::MemoryUsage() const {
  // Stream::MemoryUsage counts sizeof(Stream); this block holds it plus the vtable.
  return malloc_usable_size(const_cast<StreamObject*>(this)) - sizeof(Stream) +
         stream_.MemoryUsage() + (groups_ == nullptr ? 0 : groups_->MemoryUsage());
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
  if (groups_ == nullptr) return;
  groups_->ForEach([&](std::string_view name, const ConsumerGroup& group) {
    digest->Mix(name);
    digest->Mix(group.last_delivered_id().ToString());
    digest->Mix(group.entries_read());
    group.ForEachConsumer([&](const ConsumerInfo& consumer) { digest->Mix(consumer.name); });
    for (const PendingEntry& entry :
         group.PendingRange(StreamId::Min(), StreamId::Max(), SIZE_MAX, std::nullopt, 0, 0)) {
      digest->Mix(entry.id.ToString());
      digest->Mix(entry.consumer);
      digest->Mix(static_cast<int64_t>(entry.delivery_count));
    }
  });
}

void StreamObject::Describe(StatFields* fields) const {
  auto count = [](size_t n) { return static_cast<int64_t>(n); };
  fields->insert(fields->end(), {{"layout", std::string_view("packed nodes")},
                                 {"entries", count(stream_.size())},
                                 {"nodes", count(stream_.node_count())},
                                 {"groups", count(groups_ == nullptr ? 0 : groups_->size())}});
}

void StreamObject::AppendSnapshotValue(std::string* out, std::string* scratch) const {
  scratch->clear();
  stream_.Dump(scratch);
  std::string groups;
  if (groups_ != nullptr && !groups_->empty()) groups_->Dump(&groups);
  AppendVar(out, VarintSize(scratch->size()) + scratch->size() + groups.size());
  AppendLengthPrefixed(out, *scratch);
  out->append(groups);
}

Collection* StreamObject::DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                         std::string* what) {
  Stream stream(Stream::Limits{limits.stream.max_node_bytes, limits.stream.max_node_entries});
  ByteReader reader(bytes);
  std::string_view entries;
  if (!reader.LengthPrefixed(&entries) || !Stream::Restore(entries, &stream)) {
    *what = "malformed stream";
    return nullptr;
  }
  std::unique_ptr<StreamGroups> groups;
  if (!reader.done()) {
    std::string_view rest;
    reader.Bytes(reader.remaining(), &rest);
    groups = std::make_unique<StreamGroups>();
    if (!StreamGroups::Restore(rest, groups.get())) {
      *what = "malformed stream consumer groups";
      return nullptr;
    }
  }
  return new StreamObject(std::move(stream), std::move(groups));
}

}  // namespace goblin
