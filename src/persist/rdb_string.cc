#include "persist/rdb_string.h"

#include <liblzf/lzf.h>

#include <cstring>

#include "core/crc64.h"
#include "core/string_number.h"
#include "persist/rdb_format.h"

namespace goblin {

void RdbAppendLength(std::string* out, uint64_t length) {
  if (length < (1 << 6)) {
    out->push_back(static_cast<char>(length));
  } else if (length < (1 << 14)) {
    out->push_back(static_cast<char>(0x40 | (length >> 8)));
    out->push_back(static_cast<char>(length & 0xff));
  } else if (length <= UINT32_MAX) {
    out->push_back(static_cast<char>(0x80));
    for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(length >> shift));
  } else {
    out->push_back(static_cast<char>(0x81));
    for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(length >> shift));
  }
}

void RdbAppendString(std::string* out, std::string_view bytes) {
  RdbAppendLength(out, bytes.size());
  out->append(bytes);
}

void RdbAppendEncodedString(std::string* out, std::string_view bytes, bool compress) {
  int64_t value;
  if (bytes.size() <= 11 && ParseInt64(bytes, &value) && value >= INT32_MIN && value <= INT32_MAX) {
    const int width = value >= INT8_MIN && value <= INT8_MAX     ? 1
                      : value >= INT16_MIN && value <= INT16_MAX ? 2
                                                                 : 4;
    out->push_back(static_cast<char>(0xc0 | (width == 1 ? 0 : width == 2 ? 1 : 2)));
    const auto bits = static_cast<uint32_t>(static_cast<int32_t>(value));
    for (int i = 0; i < width; ++i) out->push_back(static_cast<char>(bits >> (8 * i)));
    return;
  }
  if (compress && bytes.size() > 20) {
    // The compressed form must save 4 bytes: LZF gets that much room and gives up beyond it.
    thread_local std::string packed;
    const size_t room = bytes.size() - 4;
    if (packed.size() < room) packed.resize(room);
    const unsigned int size = lzf_compress(bytes.data(), static_cast<unsigned int>(bytes.size()),
                                           packed.data(), static_cast<unsigned int>(room));
    if (size > 0) {
      out->push_back(static_cast<char>(0xc3));
      RdbAppendLength(out, size);
      RdbAppendLength(out, bytes.size());
      out->append(packed.data(), size);
      return;
    }
  }
  RdbAppendString(out, bytes);
}

void RdbAppendFunction(std::string* out, std::string_view code, bool compress) {
  out->push_back(static_cast<char>(rdb::kOpFunction2));
  RdbAppendEncodedString(out, code, compress);
}

namespace {

bool ReadLengthOrEncoding(std::string_view data, size_t* pos, uint64_t* value, bool* encoded) {
  if (*pos >= data.size()) return false;
  auto byte = [&](size_t i) { return static_cast<uint8_t>(data[i]); };
  uint8_t first = byte((*pos)++);
  *encoded = false;
  switch (first >> 6) {
    case 0:
      *value = first & 0x3f;
      return true;
    case 1:
      if (*pos >= data.size()) return false;
      *value = static_cast<uint64_t>(first & 0x3f) << 8 | byte((*pos)++);
      return true;
    case 3:
      *encoded = true;
      *value = first & 0x3f;
      return true;
    default: {
      size_t width = first == 0x80 ? 4 : first == 0x81 ? 8 : 0;
      if (width == 0 || data.size() - *pos < width) return false;
      *value = 0;
      for (size_t i = 0; i < width; ++i) *value = *value << 8 | byte((*pos)++);
      return true;
    }
  }
}

}  // namespace

bool RdbReadLength(std::string_view data, size_t* pos, uint64_t* length) {
  bool encoded = false;
  return ReadLengthOrEncoding(data, pos, length, &encoded) && !encoded;
}

bool RdbReadString(std::string_view data, size_t* pos, std::string* out) {
  std::string_view view;
  if (!RdbReadStringView(data, pos, out, &view)) return false;
  if (view.data() != out->data()) out->assign(view);
  return true;
}

bool RdbReadStringView(std::string_view data, size_t* pos, std::string* scratch,
                       std::string_view* result) {
  uint64_t value = 0;
  bool encoded = false;
  if (!ReadLengthOrEncoding(data, pos, &value, &encoded)) return false;
  if (!encoded) {
    if (value > data.size() - *pos) return false;
    *result = data.substr(*pos, value);
    *pos += value;
    return true;
  }
  std::string* out = scratch;
  auto byte = [&](size_t i) { return static_cast<uint8_t>(data[i]); };
  if (value <= 2) {
    size_t width = size_t{1} << value;
    if (data.size() - *pos < width) return false;
    uint32_t bits = 0;
    for (size_t i = 0; i < width; ++i) bits |= static_cast<uint32_t>(byte(*pos + i)) << (8 * i);
    *pos += width;
    int64_t number = width == 1   ? static_cast<int8_t>(bits)
                     : width == 2 ? static_cast<int16_t>(bits)
                                  : static_cast<int32_t>(bits);
    *out = std::to_string(number);
    *result = *out;
    return true;
  }
  if (value != 3) return false;
  uint64_t compressed = 0;
  uint64_t length = 0;
  if (!RdbReadLength(data, pos, &compressed) || !RdbReadLength(data, pos, &length)) return false;
  // LZF expands at most about 264 times; a longer claim is corrupt, and is not allocated.
  if (compressed > data.size() - *pos || length > compressed * 264 + 64) return false;
  out->resize(length);
  unsigned int written = lzf_decompress(data.data() + *pos, static_cast<unsigned int>(compressed),
                                        out->data(), static_cast<unsigned int>(length));
  if (written != length) return false;
  *pos += compressed;
  *result = *out;
  return true;
}

void RdbAppendPayloadTrailer(std::string* payload, uint16_t version) {
  payload->push_back(static_cast<char>(version & 0xff));
  payload->push_back(static_cast<char>(version >> 8));
  uint64_t crc = Crc64(0, *payload);
  for (int i = 0; i < 8; ++i) payload->push_back(static_cast<char>(crc >> (8 * i)));
}

bool RdbCheckPayload(std::string_view payload, std::string_view* body, bool verify_checksum) {
  if (payload.size() < 10) return false;
  auto byte = [&](size_t i) { return static_cast<uint8_t>(payload[i]); };
  size_t trailer = payload.size() - 10;
  uint16_t version = static_cast<uint16_t>(byte(trailer) | byte(trailer + 1) << 8);
  if (version > kRdbVersionRead) return false;
  uint64_t crc = 0;
  for (int i = 7; i >= 0; --i) crc = crc << 8 | byte(trailer + 2 + static_cast<size_t>(i));
  if (verify_checksum && crc != Crc64(0, payload.substr(0, trailer + 2))) return false;
  *body = payload.substr(0, trailer);
  return true;
}

}  // namespace goblin
