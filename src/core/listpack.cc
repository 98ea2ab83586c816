#include "core/listpack.h"

#include "core/string_number.h"

namespace goblin {

namespace listpack {

size_t BackLengthSize(size_t encoded) {
  if (encoded <= 127) return 1;
  if (encoded < 16383) return 2;
  if (encoded < 2097151) return 3;
  if (encoded < 268435455) return 4;
  return 5;
}

namespace {

size_t IntegerEncodedSize(int64_t v) {
  if (v >= 0 && v <= 127) return 1;
  if (v >= -4096 && v <= 4095) return 2;
  if (v >= INT16_MIN && v <= INT16_MAX) return 3;
  if (v >= -8388608 && v <= 8388607) return 4;
  if (v >= INT32_MIN && v <= INT32_MAX) return 5;
  return 9;
}

size_t StringEncodedSize(size_t length) {
  if (length < 64) return 1 + length;
  if (length < 4096) return 2 + length;
  return 5 + length;
}

}  // namespace

size_t IntegerElementSize(int64_t value) {
  const size_t encoded = IntegerEncodedSize(value);
  return encoded + BackLengthSize(encoded);
}

size_t ElementSize(std::string_view value) {
  int64_t integer;
  if (ParseInt64(value, &integer)) return IntegerElementSize(integer);
  const size_t encoded = StringEncodedSize(value.size());
  return encoded + BackLengthSize(encoded);
}

}  // namespace listpack

void ListpackWriter::Clear() {
  buffer_.assign(listpack::kHeaderBytes, '\0');
  count_ = 0;
  finished_ = false;
}

void ListpackWriter::EndElement(size_t start) {
  const uint64_t encoded = buffer_.size() - start;
  const size_t size = listpack::BackLengthSize(encoded);
  // The first byte written holds the highest bits; every later one has its top bit set.
  for (size_t i = size; i-- > 0;) {
    const uint8_t bits = static_cast<uint8_t>((encoded >> (7 * i)) & 127);
    buffer_.push_back(static_cast<char>(i + 1 == size ? bits : bits | 128));
  }
  ++count_;
}

void ListpackWriter::AppendInteger(int64_t value) {
  if (finished_) {
    buffer_.pop_back();
    finished_ = false;
  }
  const size_t start = buffer_.size();
  auto put = [&](uint64_t bits, int bytes) {
    for (int i = 0; i < bytes; ++i) buffer_.push_back(static_cast<char>(bits >> (8 * i)));
  };
  const uint64_t bits = static_cast<uint64_t>(value);
  if (value >= 0 && value <= 127) {
    buffer_.push_back(static_cast<char>(value));
  } else if (value >= -4096 && value <= 4095) {
    const uint64_t v = bits & 0x1fff;  // 13-bit two's complement
    buffer_.push_back(static_cast<char>(0xc0 | (v >> 8)));
    buffer_.push_back(static_cast<char>(v & 0xff));
  } else if (value >= INT16_MIN && value <= INT16_MAX) {
    buffer_.push_back(static_cast<char>(0xf1));
    put(bits, 2);
  } else if (value >= -8388608 && value <= 8388607) {
    buffer_.push_back(static_cast<char>(0xf2));
    put(bits, 3);
  } else if (value >= INT32_MIN && value <= INT32_MAX) {
    buffer_.push_back(static_cast<char>(0xf3));
    put(bits, 4);
  } else {
    buffer_.push_back(static_cast<char>(0xf4));
    put(bits, 8);
  }
  EndElement(start);
}

void ListpackWriter::AppendString(std::string_view value) {
  int64_t integer;
  if (value.size() <= kInt64TextMax && ParseInt64(value, &integer)) {
    AppendInteger(integer);
    return;
  }
  if (finished_) {
    buffer_.pop_back();
    finished_ = false;
  }
  const size_t start = buffer_.size();
  const size_t length = value.size();
  if (length < 64) {
    buffer_.push_back(static_cast<char>(0x80 | length));
  } else if (length < 4096) {
    buffer_.push_back(static_cast<char>(0xe0 | (length >> 8)));
    buffer_.push_back(static_cast<char>(length & 0xff));
  } else {
    buffer_.push_back(static_cast<char>(0xf0));
    for (int i = 0; i < 4; ++i) buffer_.push_back(static_cast<char>(length >> (8 * i)));
  }
  buffer_.append(value);
  EndElement(start);
}

void ListpackWriter::AppendElements(const ListpackWriter& other) {
  if (finished_) {
    buffer_.pop_back();
    finished_ = false;
  }
  const size_t end = other.buffer_.size() - (other.finished_ ? 1 : 0);
  buffer_.append(other.buffer_, listpack::kHeaderBytes, end - listpack::kHeaderBytes);
  count_ += other.count_;
}

std::string_view ListpackWriter::Finish() {
  if (!finished_) {
    buffer_.push_back(static_cast<char>(listpack::kEnd));
    finished_ = true;
  }
  const uint64_t total = buffer_.size();
  const uint64_t count = count_ < listpack::kCountUnknown ? count_ : listpack::kCountUnknown;
  for (int i = 0; i < 4; ++i) buffer_[i] = static_cast<char>(total >> (8 * i));
  buffer_[4] = static_cast<char>(count & 0xff);
  buffer_[5] = static_cast<char>(count >> 8);
  return buffer_;
}

}  // namespace goblin
