// StreamObject: the Collection a stream key owns, a thin shell around goblin::Stream.
//
// Unlike the other collections a stream key may hold an empty stream: XDEL and XTRIM leave
// the key (with its last id) in place, as Redis does.
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

#include "core/collection.h"
#include "core/stream.h"
#include "core/value_types.h"

namespace goblin {

class StreamObject final : public Collection {
 public:
  StreamObject() = default;
  explicit StreamObject(Stream&& stream) : stream_(std::move(stream)) {}

  Stream& stream() { return stream_; }
  const Stream& stream() const { return stream_; }

  ValueType type() const override { return ValueType::kStream; }
  size_t MemoryUsage() const override;
  std::string_view EncodingName() const override { return "stream"; }
  Collection* Clone() const override { return new StreamObject(Stream(stream_)); }
  size_t Optimize() override { return 0; }
  // The entries in order, ids and fields, and the stream's last id.
  void Digest(ValueDigest* digest) const override;
  void Describe(StatFields* fields) const override;
  void AppendSnapshotValue(std::string* out, std::string* scratch) const override;
  static Collection* DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                    std::string* what);

 private:
  Stream stream_;
};

}  // namespace goblin
