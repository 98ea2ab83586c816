#include "core/zset_listpack.h"

#include <malloc.h>

#include <cstdlib>
#include <utility>

namespace goblin {

ZsetListpack::~ZsetListpack() { std::free(block_); }

ZsetListpack::ZsetListpack(ZsetListpack&& other) noexcept
    : block_(std::exchange(other.block_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

ZsetListpack& ZsetListpack::operator=(ZsetListpack&& other) noexcept {
  if (this != &other) {
    std::free(block_);
    block_ = std::exchange(other.block_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void ZsetListpack::Resize(size_t payload_bytes) {
  if (payload_bytes == 0) {
    std::free(block_);
    block_ = nullptr;
    capacity_ = 0;
    return;
  }
  const bool fresh = block_ == nullptr;
  auto* block = static_cast<uint8_t*>(std::realloc(block_, kHeaderBytes + payload_bytes));
  if (block == nullptr) std::abort();
  block_ = block;
  capacity_ = malloc_usable_size(block_) - kHeaderBytes;
  if (fresh) *header() = Header{0, 0};
}

bool ZsetListpack::Find(std::string_view member, ZsetRunPosition* pos, ZsetEntry* entry) const {
  return block_ != nullptr && ZsetRunFind(data(), header()->count, member, pos, entry);
}

void ZsetListpack::InsertNew(uint64_t key, bool negative_zero, std::string_view member) {
  const uint32_t count = static_cast<uint32_t>(size());
  const uint32_t used = static_cast<uint32_t>(used_bytes());
  const ZsetRunPosition pos = ZsetRunLowerBound(data(), count, key, member);
  const size_t needed = used + ZsetRunInsertGrowth(data(), count, used, pos, key, member);
  // realloc to the exact need: inside one size class it does not move, so this costs what a
  // listpack insert costs in Redis and never leaves slack behind.
  if (needed > capacity_) Resize(needed);
  header()->used = ZsetRunInsert(payload(), count, used, pos, key, negative_zero, member);
  header()->count = count + 1;
}

void ZsetListpack::EraseAt(size_t first, size_t n) {
  if (n == 0) return;
  const uint32_t count = header()->count;
  const ZsetRunPosition pos = ZsetRunSeek(data(), static_cast<uint32_t>(first));
  header()->used = ZsetRunErase(payload(), count, header()->used, pos, static_cast<uint32_t>(n));
  header()->count = count - static_cast<uint32_t>(n);
  if (header()->count == 0) {
    Resize(0);
  } else if (header()->used < capacity_ / 2) {
    Resize(header()->used);
  }
}

size_t ZsetListpack::CountBelowKey(uint64_t key, bool inclusive) const {
  return block_ == nullptr ? 0 : ZsetRunCountBelowKey(data(), header()->count, key, inclusive);
}

size_t ZsetListpack::CountBelowMember(std::string_view member, bool inclusive) const {
  const uint8_t* p = data();
  ZsetEntry e;
  const size_t count = size();
  for (size_t i = 0; i < count; ++i) {
    p = DecodeZsetEntry(p, e.key, &e);
    if (inclusive ? e.member > member : e.member >= member) return i;
  }
  return count;
}

ZsetEntry ZsetListpack::EntryAt(size_t rank) const {
  const ZsetRunPosition pos = ZsetRunSeek(data(), static_cast<uint32_t>(rank));
  ZsetEntry e;
  DecodeZsetEntry(data() + pos.offset, pos.prev_key, &e);
  return e;
}

size_t ZsetListpack::Shrink() {
  const size_t before = MemoryUsage();
  if (block_ != nullptr) Resize(header()->used);
  const size_t after = MemoryUsage();
  return before > after ? before - after : 0;
}

size_t ZsetListpack::MemoryUsage() const {
  return block_ == nullptr ? 0 : malloc_usable_size(block_);
}

}  // namespace goblin
