// A connection's unsent replies, as a list of blocks.
//
//   head_                                     tail_
//   +-------------------+    +-----------+    +-------------------+
//   | next | cap | used |--->|   ...     |--->| next | cap | used |--> null
//   | sent...|unsent... |    |           |    | unsent... | free  |
//   +-------------------+    +-----------+    +-------------------+
//     ^ head_offset_
//
// Why not one std::string: a reply is appended once and written once, but a string that grows
// copies everything unsent into a buffer twice the size each time it fills, and the kernel
// faults in every page of each new buffer. A client that pipelines 64 GETs of a 1 MB value and
// reads nothing made the server copy and fault three times the 64 MB it held, before any other
// client was served. Here an append fills the last block and puts the rest in a new one, so
// each byte is copied and faulted once, as in Redis's reply list.
//
// Invariants:
// 1. Blocks hold kBlockSize bytes, or more when one append needs more (a 1 MB bulk string is
//    one block of its own size): a long reply costs one allocation per block.
// 2. Every block but the last is full up to its `used`; unsent bytes run from head_offset_ in
//    the head block to `used` in the tail.
// 3. A block whose bytes are all written is freed at once, so a client that drains slowly
//    gives its memory back as it goes. When everything is written, the head block is kept for
//    the next replies if it is of the standard size, else freed.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

class OutputBuffer {
 public:
  static constexpr size_t kBlockSize = 16 * 1024;

  OutputBuffer() = default;
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;
  OutputBuffer(OutputBuffer&& other) noexcept;
  OutputBuffer& operator=(OutputBuffer&& other) noexcept;
  ~OutputBuffer();

  // Unsent bytes.
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Bytes allocated for blocks, sent, unsent and free (CLIENT LIST, INFO's client memory).
  size_t allocated() const { return allocated_; }
  size_t blocks() const { return blocks_; }
  // Positions in every byte ever appended: where the unsent bytes end, and where they begin
  // (the bytes written or dropped so far). A command marks where its reply starts with
  // end_position(); the mark holds even if earlier bytes are written meanwhile.
  uint64_t end_position() const { return consumed_ + size_; }
  uint64_t consumed() const { return consumed_; }

  void append(std::string_view bytes);
  void append(const char* bytes, size_t count) { append(std::string_view(bytes, count)); }
  void push_back(char c);
  // Appends other's unsent bytes.
  void append(const OutputBuffer& other);

  // Drops every unsent byte (the client is being closed, or its replies are discarded). The
  // standard-size head block is kept, as after a complete write.
  void clear();
  // With nothing unsent, gives the kept head block back to the allocator too: an idle client
  // then holds no reply buffer at all (the tick does this once a second, as Redis's client
  // cron shrinks the reply buffer of a client whose replies stayed small).
  // Returns whether a block was given back.
  bool ReleaseIfEmpty() {
    if (size_ != 0 || head_ == nullptr) return false;
    FreeAll();
    return true;
  }
  // Drops bytes from the end so that size() is count. REQUIRES: count <= size().
  void Truncate(size_t count);
  // The first count bytes have been written: they go, and blocks left empty are freed.
  // REQUIRES: count <= size().
  void Consume(size_t count);

  // The byte at pos of the unsent bytes. REQUIRES: pos < size().
  char at(size_t pos) const;
  // The position of the first c at or after pos, or std::string::npos.
  size_t find(char c, size_t pos) const;
  // Up to count unsent bytes from pos, copied. REQUIRES: pos <= size().
  std::string substr(size_t pos, size_t count = std::string::npos) const;
  std::string ToString() const { return substr(0); }

  // Fills up to max iovecs with the unsent bytes in order; returns how many it filled.
  size_t Gather(iovec* vectors, size_t max) const;

 private:
  struct Block {
    Block* next;
    size_t capacity;
    size_t used;
    char* data() { return reinterpret_cast<char*>(this + 1); }
    const char* data() const { return reinterpret_cast<const char*>(this + 1); }
  };

  Block* NewBlock(size_t capacity);
  void FreeBlock(Block* block);
  void FreeAll();
  // Nothing is unsent: the standard-size head is kept, emptied, and every other block freed.
  void Drained();
  // The block and offset where unsent position pos lies (the tail's end for pos == size()).
  const Block* Locate(size_t pos, size_t* offset) const;

  Block* head_ = nullptr;
  Block* tail_ = nullptr;
  size_t head_offset_ = 0;  // bytes of the head block already written
  size_t size_ = 0;
  uint64_t consumed_ = 0;
  size_t allocated_ = 0;
  size_t blocks_ = 0;
};

}  // namespace goblin
