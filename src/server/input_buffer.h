// A client's unexecuted input bytes: one growable array with a read position and a write
// position. Unlike std::string it never zero-fills the room it reserves for read(2), which
// matters when every read reserves 64 KB.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

namespace goblin {

class InputBuffer {
 public:
  InputBuffer() = default;
  ~InputBuffer() { std::free(data_); }
  InputBuffer(const InputBuffer&) = delete;
  InputBuffer& operator=(const InputBuffer&) = delete;

  // Bytes read but not consumed yet.
  std::string_view pending() const { return {data_ + start_, end_ - start_}; }
  size_t size() const { return end_ - start_; }
  size_t capacity() const { return capacity_; }

  // Room for at least n more bytes after the pending ones; returns where to write them.
  char* PrepareWrite(size_t n) {
    if (capacity_ - end_ < n) {
      if (start_ > 0) {  // slide the pending bytes to the front first
        std::memmove(data_, data_ + start_, end_ - start_);
        end_ -= start_;
        start_ = 0;
      }
      if (capacity_ - end_ < n) Grow(end_ + n);
    }
    return data_ + end_;
  }
  void CommitWrite(size_t n) {
    end_ += n;
    if (end_ - start_ > peak_) peak_ = end_ - start_;
  }
  void Consume(size_t n) {
    start_ += n;
    if (start_ == end_) start_ = end_ = 0;
  }
  // Gives a large, empty buffer back to the allocator.
  void ShrinkIfEmpty(size_t keep) {
    if (start_ == end_ && capacity_ > keep) Release();
  }

  // The most bytes pending at once since the last ResetPeak.
  size_t peak() const { return peak_; }
  void ResetPeak() { peak_ = size(); }

  // Redis's query-buffer resize rules, applied by the tick: a buffer wasting more than 4 KB is
  // released when its client has been idle over 2 s with nothing pending, or cut to what is
  // pending when idle with a peak under half the room; a busy buffer over 32 KB whose peak
  // stayed under half of it is cut to max(pending, peak, min_keep) (min_keep: the rest of a
  // bulk argument being read). Then the peak starts over.
  void ResizeForIdleOrPeak(bool idle, size_t min_keep) {
    constexpr size_t kWasteWorthResizing = 4 * 1024;
    constexpr size_t kResizeThreshold = 32 * 1024;
    if (capacity_ - size() > kWasteWorthResizing) {
      if (idle) {
        if (size() == 0) {
          Release();
        } else if (peak_ < capacity_ / 2) {
          Reallocate(size());
        }
      } else if (capacity_ > kResizeThreshold && capacity_ / 2 > peak_) {
        size_t keep = size() > peak_ ? size() : peak_;
        if (keep < min_keep) keep = min_keep;
        if (keep < capacity_) Reallocate(keep);
      }
    }
    ResetPeak();
  }

 private:
  void Grow(size_t needed) {
    size_t capacity = capacity_ == 0 ? 16 * 1024 : capacity_;
    while (capacity < needed) capacity *= 2;
    char* data = static_cast<char*>(std::realloc(data_, capacity));
    if (data == nullptr) throw std::bad_alloc();
    data_ = data;
    capacity_ = capacity;
  }

  void Release() {
    std::free(data_);
    data_ = nullptr;
    capacity_ = start_ = end_ = 0;
  }

  // Moves the pending bytes to the front of a block of exactly `capacity` bytes (>= size()).
  void Reallocate(size_t capacity) {
    if (capacity == 0) {
      Release();
      return;
    }
    if (start_ > 0) {
      std::memmove(data_, data_ + start_, end_ - start_);
      end_ -= start_;
      start_ = 0;
    }
    char* data = static_cast<char*>(std::realloc(data_, capacity));
    if (data == nullptr) throw std::bad_alloc();
    data_ = data;
    capacity_ = capacity;
  }

  char* data_ = nullptr;
  size_t capacity_ = 0;
  size_t start_ = 0;
  size_t end_ = 0;
  size_t peak_ = 0;
};

}  // namespace goblin
