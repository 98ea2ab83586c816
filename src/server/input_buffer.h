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
  void CommitWrite(size_t n) { end_ += n; }
  void Consume(size_t n) {
    start_ += n;
    if (start_ == end_) start_ = end_ = 0;
  }
  // Gives a large, empty buffer back to the allocator.
  void ShrinkIfEmpty(size_t keep) {
    if (start_ == end_ && capacity_ > keep) {
      std::free(data_);
      data_ = nullptr;
      capacity_ = 0;
    }
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

  char* data_ = nullptr;
  size_t capacity_ = 0;
  size_t start_ = 0;
  size_t end_ = 0;
};

}  // namespace goblin
