// An append-mostly array whose growth never copies more than one chunk.
//
// The sorted set addresses leaves, inner nodes and index segments by 32-bit numbers through
// tables of pointers. A std::vector would copy the whole table when it grows, which for a
// 20-million-member set is megabytes inside one command; here only the first chunk grows by
// doubling (so a small set pays for a small table), and past kChunk elements every chunk is
// allocated once at its full size.
//
// Invariants:
//  1. chunks_[0] has at most kChunk elements; every later chunk has capacity exactly kChunk.
//  2. Element i lives in chunks_[i / kChunk][i % kChunk] and never moves once the first chunk
//     is full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace goblin {

template <typename T>
class ZsetChunkedArray {
 public:
  static constexpr size_t kChunk = 4096;

  ZsetChunkedArray() = default;
  ZsetChunkedArray(const ZsetChunkedArray&) = delete;
  ZsetChunkedArray& operator=(const ZsetChunkedArray&) = delete;

  size_t size() const { return size_; }

  T& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  const T& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }

  void push_back(const T& value) {
    if (size_ % kChunk == 0 && size_ / kChunk == chunks_.size()) {
      chunks_.emplace_back();
      if (chunks_.size() > 1) chunks_.back().reserve(kChunk);
    }
    chunks_[size_ / kChunk].push_back(value);
    ++size_;
  }

  // REQUIRES: size() > 0.
  void pop_back() {
    --size_;
    chunks_[size_ / kChunk].pop_back();
    if (chunks_.back().empty() && chunks_.size() > 1) chunks_.pop_back();
  }

  void swap(ZsetChunkedArray& other) noexcept {
    chunks_.swap(other.chunks_);
    std::swap(size_, other.size_);
  }

  void clear() {
    chunks_.clear();
    chunks_.shrink_to_fit();
    size_ = 0;
  }

  // Bytes held by the table (the elements' own allocations are not included).
  size_t MemoryUsage() const {
    size_t bytes = chunks_.capacity() * sizeof(std::vector<T>);
    for (const auto& chunk : chunks_) bytes += chunk.capacity() * sizeof(T);
    return bytes;
  }

 private:
  std::vector<std::vector<T>> chunks_;
  size_t size_ = 0;
};

}  // namespace goblin
