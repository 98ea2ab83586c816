// Redis's listpack: the byte layout Redis keeps small hashes, sorted sets, list nodes and stream
// nodes in, and writes into RDB files as it lies. ListpackWriter builds one; the element sizes
// below are also what PackedList measures its lists by (Redis converts lists by these bytes).
//
//   listpack := [total bytes u32 LE][element count u16 LE] element* [0xFF]
//               the count is 65535 ("unknown": count the elements) once there are that many
//   element  := [encoding + data][back length]
//
//   encoding + data, first byte:
//     0xxxxxxx                    7-bit unsigned integer 0..127
//     10xxxxxx + bytes            string of 0..63 bytes
//     110xxxxx yyyyyyyy           13-bit signed integer -4096..4095 (x = high bits)
//     1110xxxx yyyyyyyy + bytes   string of 64..4095 bytes (length big-endian)
//     11110000 + u32 LE + bytes   string of 4096 bytes or more
//     11110001 + 2 bytes LE       16-bit signed integer
//     11110010 + 3 bytes LE       24-bit signed integer
//     11110011 + 4 bytes LE       32-bit signed integer
//     11110100 + 8 bytes LE       64-bit signed integer
//   back length: the size of encoding + data in 1 to 5 bytes, 7 bits a byte, read from its last
//   byte backwards (every byte but the first written has its top bit set), so the listpack can
//   be walked from the end. Sizes up to 127 take 1 byte, below 16383 2, below 2097151 3, below
//   268435455 4, else 5 (Redis's bounds, checked by its validator byte for byte).
//
// A string is stored as an integer exactly when it is the canonical decimal text of an int64
// (ParseInt64: no '+', no leading zeros, no "-0"), as Redis's lpAppend does, and always in the
// smallest form that holds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

namespace listpack {

inline constexpr size_t kHeaderBytes = 6;
inline constexpr uint8_t kEnd = 0xFF;
inline constexpr uint32_t kCountUnknown = 65535;

// Bytes of the back length of an element whose encoding and data take `encoded` bytes.
size_t BackLengthSize(size_t encoded);
// Bytes one element takes, back length included.
size_t IntegerElementSize(int64_t value);
size_t ElementSize(std::string_view value);

}  // namespace listpack

// Appends elements to a listpack under construction and finishes it. Reusable after Clear.
class ListpackWriter {
 public:
  ListpackWriter() { Clear(); }

  // An integer when value is canonical integer text, else a string (see the top of the file).
  void AppendString(std::string_view value);
  void AppendInteger(int64_t value);
  // Appends other's elements, in order.
  void AppendElements(const ListpackWriter& other);

  size_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // The size of the finished listpack: header, elements and end byte.
  size_t bytes() const { return buffer_.size() + (finished_ ? 0 : 1); }

  // Writes the header and the end byte and returns the listpack, valid until the next change.
  // Appending afterwards continues the same listpack. REQUIRES: bytes() fits 32 bits.
  std::string_view Finish();
  void Clear();

 private:
  // Appends the back length of the element that starts at `start`.
  void EndElement(size_t start);

  std::string buffer_;  // header placeholder, then the elements (no end byte until Finish)
  size_t count_ = 0;
  bool finished_ = false;
};

// Counts what a ListpackWriter given the same calls would hold, writing nothing (to plan where
// a sequence of listpacks is cut before writing them).
class ListpackSizer {
 public:
  void AppendString(std::string_view value) {
    elements_ += listpack::ElementSize(value);
    ++count_;
  }
  void AppendInteger(int64_t value) {
    elements_ += listpack::IntegerElementSize(value);
    ++count_;
  }
  size_t count() const { return count_; }
  size_t bytes() const { return listpack::kHeaderBytes + elements_ + 1; }
  void Clear() { elements_ = count_ = 0; }

 private:
  size_t elements_ = 0;
  size_t count_ = 0;
};

}  // namespace goblin
