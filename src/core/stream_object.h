// StreamObject: the Collection a stream key owns: a goblin::Stream and, once XGROUP CREATE
// made one, its consumer groups (core/stream_groups.h; a stream without groups pays one null
// pointer for them).
//
// Unlike the other collections a stream key may hold an empty stream: XDEL and XTRIM leave
// the key (with its last id and groups) in place, as Redis does.
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>

#include "core/collection.h"
#include "core/stream.h"
#include "core/stream_groups.h"
#include "core/value_types.h"

namespace goblin {

class StreamObject final : public Collection {
 public:
  StreamObject() = default;
  explicit StreamObject(Stream&& stream, std::unique_ptr<StreamGroups> groups = nullptr)
      : stream_(std::move(stream)), groups_(std::move(groups)) {}

  Stream& stream() { return stream_; }
  const Stream& stream() const { return stream_; }
  // nullptr while the stream never had a group.
  StreamGroups* groups() { return groups_.get(); }
  const StreamGroups* groups() const { return groups_.get(); }
  StreamGroups& EnsureGroups();
  // The named group, or nullptr.
  ConsumerGroup* FindGroup(std::string_view name) {
    return groups_ == nullptr ? nullptr : groups_->Find(name);
  }

  ValueType type() const override { return ValueType::kStream; }
  size_t MemoryUsage() const override;
  std::string_view EncodingName() const override { return "stream"; }
  Collection* Clone() const override;
  size_t Optimize() override { return 0; }
  // The entries in order, ids and fields, the stream's last id, and each group's name, last
  // delivered id, read counter, consumers and pending ids with their owners and delivery
  // counts (not the times: a replay of the log delivers at other times).
  void Digest(ValueDigest* digest) const override;
  void Describe(StatFields* fields) const override;
  void AppendSnapshotValue(std::string* out, std::string* scratch) const override;
  static Collection* DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                    std::string* what);

 private:
  Stream stream_;
  std::unique_ptr<StreamGroups> groups_;
};

}  // namespace goblin
