// Little-endian fixed-width fields, varints and length-prefixed byte strings: the vocabulary
// of Goblin's snapshot values and files (docs/FORMAT.md). ByteReader checks every bound and
// stops at the first failed read; the Append functions extend a std::string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/varint.h"

namespace goblin {

inline void AppendU8(std::string* out, uint8_t v) { out->push_back(static_cast<char>(v)); }

inline void AppendFixed(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

inline void AppendVar(std::string* out, uint64_t v) {
  uint8_t buffer[kMaxVarintBytes];
  out->append(reinterpret_cast<const char*>(buffer),
              static_cast<size_t>(PutVarint(buffer, v) - buffer));
}

inline void AppendLengthPrefixed(std::string* out, std::string_view bytes) {
  AppendVar(out, bytes.size());
  out->append(bytes);
}

// Bounded reads over bytes; `base` is where the bytes start in their file, so that offset()
// can name the byte a failure is at.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes, uint64_t base = 0) : bytes_(bytes), base_(base) {}

  bool done() const { return pos_ == bytes_.size(); }
  uint64_t offset() const { return base_ + pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }

  bool U8(uint8_t* v) {
    if (remaining() < 1) return false;
    *v = static_cast<uint8_t>(bytes_[pos_++]);
    return true;
  }
  bool Fixed(uint64_t* v, int bytes) {
    if (remaining() < static_cast<size_t>(bytes)) return false;
    uint64_t result = 0;
    for (int i = 0; i < bytes; ++i) {
      result |= uint64_t{static_cast<uint8_t>(bytes_[pos_ + i])} << (8 * i);
    }
    pos_ += bytes;
    *v = result;
    return true;
  }
  bool Var(uint64_t* v) {
    const auto* begin = reinterpret_cast<const uint8_t*>(bytes_.data());
    const uint8_t* next = GetVarintChecked(begin + pos_, begin + bytes_.size(), v);
    if (next == nullptr) return false;
    pos_ = static_cast<size_t>(next - begin);
    return true;
  }
  bool Bytes(size_t n, std::string_view* out) {
    if (remaining() < n) return false;
    *out = bytes_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool LengthPrefixed(std::string_view* out) {
    uint64_t n;
    return Var(&n) && n <= remaining() && Bytes(static_cast<size_t>(n), out);
  }

 private:
  std::string_view bytes_;
  uint64_t base_;
  size_t pos_ = 0;
};

}  // namespace goblin
