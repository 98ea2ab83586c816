#include "resp/output_buffer.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace goblin {

OutputBuffer::OutputBuffer(OutputBuffer&& other) noexcept { *this = std::move(other); }

OutputBuffer& OutputBuffer::operator=(OutputBuffer&& other) noexcept {
  if (this == &other) return *this;
  FreeAll();
  head_ = std::exchange(other.head_, nullptr);
  tail_ = std::exchange(other.tail_, nullptr);
  head_offset_ = std::exchange(other.head_offset_, 0);
  size_ = std::exchange(other.size_, 0);
  consumed_ = std::exchange(other.consumed_, 0);
  allocated_ = std::exchange(other.allocated_, 0);
  blocks_ = std::exchange(other.blocks_, 0);
  return *this;
}

OutputBuffer::~OutputBuffer() { FreeAll(); }

OutputBuffer::Block* OutputBuffer::NewBlock(size_t capacity) {
  void* memory = ::operator new(sizeof(Block) + capacity);
  Block* block = new (memory) Block{nullptr, capacity, 0};
  allocated_ += capacity;
  ++blocks_;
  if (tail_ == nullptr) {
    head_ = tail_ = block;
  } else {
    tail_->next = block;
    tail_ = block;
  }
  return block;
}

void OutputBuffer::FreeBlock(Block* block) {
  allocated_ -= block->capacity;
  --blocks_;
  ::operator delete(block);
}

void OutputBuffer::FreeAll() {
  while (head_ != nullptr) {
    Block* next = head_->next;
    FreeBlock(head_);
    head_ = next;
  }
  tail_ = nullptr;
  head_offset_ = 0;
  size_ = 0;
}

void OutputBuffer::append(std::string_view bytes) {
  if (bytes.empty()) return;
  size_ += bytes.size();
  if (tail_ != nullptr) {
    const size_t room = std::min(tail_->capacity - tail_->used, bytes.size());
    std::memcpy(tail_->data() + tail_->used, bytes.data(), room);
    tail_->used += room;
    bytes.remove_prefix(room);
    if (bytes.empty()) return;
  }
  Block* block = NewBlock(std::max(kBlockSize, bytes.size()));
  std::memcpy(block->data(), bytes.data(), bytes.size());
  block->used = bytes.size();
}

void OutputBuffer::push_back(char c) {
  if (tail_ != nullptr && tail_->used < tail_->capacity) {
    tail_->data()[tail_->used++] = c;
    ++size_;
    return;
  }
  append(std::string_view(&c, 1));
}

void OutputBuffer::append(const OutputBuffer& other) {
  size_t offset = other.head_offset_;
  for (const Block* block = other.head_; block != nullptr; block = block->next) {
    append(std::string_view(block->data() + offset, block->used - offset));
    offset = 0;
  }
}

void OutputBuffer::clear() { Consume(size_); }

void OutputBuffer::Truncate(size_t count) {
  size_t offset = 0;
  Block* keep = const_cast<Block*>(Locate(count, &offset));
  if (keep == nullptr) return;  // empty
  // Blocks past the one holding the new end go; with the end at a block's very start, that
  // block stays, empty, for the next append.
  for (Block* block = keep->next; block != nullptr;) {
    Block* next = block->next;
    FreeBlock(block);
    block = next;
  }
  keep->next = nullptr;
  keep->used = offset;
  tail_ = keep;
  size_ = count;
  if (size_ == 0) Drained();
}

void OutputBuffer::Consume(size_t count) {
  size_ -= count;
  consumed_ += count;
  while (count > 0) {
    const size_t in_head = head_->used - head_offset_;
    if (count < in_head) {
      head_offset_ += count;
      return;
    }
    count -= in_head;
    if (head_->next == nullptr) break;
    Block* next = head_->next;
    FreeBlock(head_);
    head_ = next;
    head_offset_ = 0;
  }
  if (size_ == 0) Drained();
}

void OutputBuffer::Drained() {
  if (head_ == nullptr) return;
  while (head_->next != nullptr) {  // blocks left empty by Truncate
    Block* next = head_->next;
    FreeBlock(head_);
    head_ = next;
  }
  if (head_->capacity == kBlockSize) {
    head_->used = 0;
    head_offset_ = 0;
    tail_ = head_;
  } else {
    FreeAll();
  }
}

const OutputBuffer::Block* OutputBuffer::Locate(size_t pos, size_t* offset) const {
  size_t start = head_offset_;
  for (const Block* block = head_; block != nullptr; block = block->next) {
    const size_t in_block = block->used - start;
    if (pos < in_block || block->next == nullptr) {
      *offset = start + pos;
      return block;
    }
    pos -= in_block;
    start = 0;
  }
  return nullptr;
}

char OutputBuffer::at(size_t pos) const {
  size_t offset = 0;
  return Locate(pos, &offset)->data()[offset];
}

size_t OutputBuffer::find(char c, size_t pos) const {
  if (pos >= size_) return std::string::npos;
  size_t offset = 0;
  const Block* block = Locate(pos, &offset);
  for (; block != nullptr; block = block->next, offset = 0) {
    const char* begin = block->data() + offset;
    const void* hit = std::memchr(begin, c, block->used - offset);
    if (hit != nullptr) return pos + static_cast<size_t>(static_cast<const char*>(hit) - begin);
    pos += block->used - offset;
  }
  return std::string::npos;
}

std::string OutputBuffer::substr(size_t pos, size_t count) const {
  count = std::min(count, size_ - pos);
  std::string out;
  out.reserve(count);
  size_t offset = 0;
  for (const Block* block = count > 0 ? Locate(pos, &offset) : nullptr;
       block != nullptr && out.size() < count; block = block->next, offset = 0) {
    out.append(block->data() + offset, std::min(block->used - offset, count - out.size()));
  }
  return out;
}

size_t OutputBuffer::Gather(iovec* vectors, size_t max) const {
  size_t filled = 0;
  size_t offset = head_offset_;
  for (const Block* block = head_; block != nullptr && filled < max;
       block = block->next, offset = 0) {
    if (block->used == offset) continue;
    vectors[filled].iov_base = const_cast<char*>(block->data() + offset);
    vectors[filled].iov_len = block->used - offset;
    ++filled;
  }
  return filled;
}

}  // namespace goblin
