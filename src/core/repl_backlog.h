// ReplBacklog: the last bytes of a replication stream, addressed by stream offset, so a replica
// that lost its link can be sent what it missed (PSYNC ... +CONTINUE) instead of a full sync.
//
// The stream is numbered from 1 (Redis's master_repl_offset counts the bytes sent; a byte's
// offset is one more than the count before it). The backlog keeps the bytes of offsets
// [first_offset(), end_offset()), at most capacity() of them, in a ring: appending past the
// capacity drops the oldest bytes. end_offset() - 1 is master_repl_offset.
//
// Invariants:
//  1. end_offset() - first_offset() == size() <= capacity().
//  2. The bytes held are exactly the last size() bytes appended, in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

class ReplBacklog {
 public:
  // A backlog whose stream continues after offset `start - 1` (start >= 1), holding up to
  // capacity bytes (repl-backlog-size; at least 1).
  ReplBacklog(size_t capacity, uint64_t start);

  size_t capacity() const { return capacity_; }
  size_t size() const { return size_; }
  uint64_t first_offset() const { return end_ - size_; }
  uint64_t end_offset() const { return end_; }

  void Append(std::string_view bytes);
  // Whether a replica that has everything before `offset` can continue from here: every byte
  // from offset on is held (offset == end_offset() means nothing is missing).
  bool Holds(uint64_t offset) const { return offset >= first_offset() && offset <= end_; }
  // Appends to out the bytes from offset to the end, at most max_bytes of them; returns how
  // many. REQUIRES: Holds(offset).
  size_t CopyFrom(uint64_t offset, size_t max_bytes, std::string* out) const;
  // Changes the capacity (CONFIG SET repl-backlog-size), keeping the newest bytes that fit.
  void Resize(size_t capacity);
  // Bytes of the ring's allocation (INFO's mem_replication_backlog).
  size_t AllocatedBytes() const { return ring_.capacity(); }

 private:
  // Ring position of the byte at offset. REQUIRES: Holds(offset).
  size_t PositionOf(uint64_t offset) const;

  std::string ring_;  // grows to capacity_ as bytes arrive, then wraps
  size_t capacity_;
  size_t size_ = 0;
  size_t head_ = 0;  // ring position the next byte goes to once the ring is full
  uint64_t end_;     // offset of the next byte
};

}  // namespace goblin
