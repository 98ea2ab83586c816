#include "core/repl_backlog.h"

#include <algorithm>
#include <cassert>

namespace goblin {

ReplBacklog::ReplBacklog(size_t capacity, uint64_t start)
    : capacity_(std::max<size_t>(capacity, 1)), end_(std::max<uint64_t>(start, 1)) {}

void ReplBacklog::Append(std::string_view bytes) {
  end_ += bytes.size();
  if (bytes.size() >= capacity_) {  // only the tail survives
    bytes.remove_prefix(bytes.size() - capacity_);
    ring_.assign(bytes);
    size_ = capacity_;
    head_ = 0;
    return;
  }
  // Fill the ring up to its capacity first, then overwrite from head_ on, wrapping.
  const size_t grow = std::min(bytes.size(), capacity_ - ring_.size());
  if (grow > 0) {
    ring_.append(bytes.substr(0, grow));
    bytes.remove_prefix(grow);
    size_ += grow;
    head_ = ring_.size() % capacity_;
  }
  while (!bytes.empty()) {
    const size_t run = std::min(bytes.size(), capacity_ - head_);
    ring_.replace(head_, run, bytes.substr(0, run));
    bytes.remove_prefix(run);
    head_ = (head_ + run) % capacity_;
    size_ = std::min(size_ + run, capacity_);
  }
}

size_t ReplBacklog::PositionOf(uint64_t offset) const {
  // The oldest byte sits at head_ once the ring is full, at 0 while it fills.
  const size_t oldest = ring_.size() < capacity_ ? 0 : head_;
  return (oldest + static_cast<size_t>(offset - first_offset())) % ring_.size();
}

size_t ReplBacklog::CopyFrom(uint64_t offset, size_t max_bytes, std::string* out) const {
  assert(Holds(offset));
  size_t left = std::min<uint64_t>(max_bytes, end_ - offset);
  const size_t copied = left;
  if (left == 0) return 0;
  size_t at = PositionOf(offset);
  while (left > 0) {
    const size_t run = std::min(left, ring_.size() - at);
    out->append(ring_, at, run);
    left -= run;
    at = (at + run) % ring_.size();
  }
  return copied;
}

void ReplBacklog::Resize(size_t capacity) {
  capacity = std::max<size_t>(capacity, 1);
  std::string kept;
  const size_t keep = std::min(size_, capacity);
  if (keep > 0) CopyFrom(end_ - keep, keep, &kept);
  ring_ = std::move(kept);
  ring_.shrink_to_fit();
  capacity_ = capacity;
  size_ = keep;
  head_ = ring_.size() % capacity_;
}

}  // namespace goblin
