#include "persist/rdb_containers.h"

#include "core/listpack.h"
#include "core/string_number.h"

namespace goblin {

namespace {

uint64_t LoadLittle(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

uint64_t LoadBig(const uint8_t* p, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i) v = v << 8 | p[i];
  return v;
}

// The low `bits` of v as a signed number.
int64_t SignExtend(uint64_t v, int bits) {
  const uint64_t sign = uint64_t{1} << (bits - 1);
  v &= (sign << 1) - 1;
  return static_cast<int64_t>((v ^ sign) - sign);
}

// A listpack's back length of an element whose encoding and data take `encoded` bytes, as
// the writer lays it out (core/listpack.h).
bool BackLengthMatches(const uint8_t* p, size_t encoded) {
  const size_t size = listpack::BackLengthSize(encoded);
  for (size_t i = size; i-- > 0;) {
    const uint8_t bits = static_cast<uint8_t>((encoded >> (7 * i)) & 127);
    if (*p++ != (i + 1 == size ? bits : bits | 128)) return false;
  }
  return true;
}

std::string ElementError(const char* container, size_t index, size_t offset, const char* what) {
  return std::string(container) + " element " + std::to_string(index) + " (byte " +
         std::to_string(offset) + "): " + what;
}

}  // namespace

std::string_view RdbElement::Text(char* scratch) const {
  if (!is_integer) return text;
  return std::string_view(scratch, FormatInt64(integer, scratch));
}

bool ReadListpack(std::string_view blob, std::vector<RdbElement>* out, std::string* what) {
  out->clear();
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  const size_t size = blob.size();
  if (size < listpack::kHeaderBytes + 1) {
    *what = "listpack of " + std::to_string(size) + " bytes is shorter than its header";
    return false;
  }
  const uint64_t total = LoadLittle(p, 4);
  if (total != size) {
    *what = "listpack header says " + std::to_string(total) + " bytes, the listpack has " +
            std::to_string(size);
    return false;
  }
  if (p[size - 1] != listpack::kEnd) {
    *what = "listpack does not end with its end byte";
    return false;
  }
  const size_t header_count = static_cast<size_t>(LoadLittle(p + 4, 2));
  const size_t end = size - 1;
  size_t pos = listpack::kHeaderBytes;
  while (pos < end) {
    const size_t index = out->size();
    const uint8_t lead = p[pos];
    const size_t room = end - pos;
    RdbElement element;
    size_t head = 1;    // encoding bytes
    uint64_t data = 0;  // bytes after them
    if (lead < 0x80) {
      element.is_integer = true;
      element.integer = lead;
    } else if ((lead & 0xC0) == 0x80) {
      data = lead & 0x3F;
    } else if ((lead & 0xE0) == 0xC0) {
      head = 2;
      if (room < 2) {
        *what = ElementError("listpack", index, pos, "truncated 13-bit integer");
        return false;
      }
      element.is_integer = true;
      element.integer = SignExtend(uint64_t{lead & 0x1Fu} << 8 | p[pos + 1], 13);
    } else if ((lead & 0xF0) == 0xE0) {
      head = 2;
      if (room < 2) {
        *what = ElementError("listpack", index, pos, "truncated string length");
        return false;
      }
      data = uint64_t{lead & 0x0Fu} << 8 | p[pos + 1];
    } else if (lead == 0xF0) {
      head = 5;
      if (room < 5) {
        *what = ElementError("listpack", index, pos, "truncated string length");
        return false;
      }
      data = LoadLittle(p + pos + 1, 4);
    } else if (lead >= 0xF1 && lead <= 0xF4) {
      static constexpr size_t kWidths[] = {2, 3, 4, 8};
      const size_t width = kWidths[lead - 0xF1];
      head = 1 + width;
      if (room < head) {
        *what = ElementError("listpack", index, pos, "truncated integer");
        return false;
      }
      element.is_integer = true;
      element.integer = SignExtend(LoadLittle(p + pos + 1, width), static_cast<int>(8 * width));
    } else {
      *what = ElementError("listpack", index, pos, "invalid encoding byte");
      return false;
    }
    if (data > room - head) {
      *what = ElementError("listpack", index, pos, "string runs past the end of the listpack");
      return false;
    }
    const size_t encoded = head + static_cast<size_t>(data);
    const size_t back = listpack::BackLengthSize(encoded);
    if (back > room - encoded || !BackLengthMatches(p + pos + encoded, encoded)) {
      *what = ElementError("listpack", index, pos, "bad back length");
      return false;
    }
    if (!element.is_integer) {
      element.text = blob.substr(pos + head, static_cast<size_t>(data));
    }
    out->push_back(element);
    pos += encoded + back;
  }
  if (header_count != listpack::kCountUnknown && header_count != out->size()) {
    *what = "listpack header counts " + std::to_string(header_count) + " elements, it holds " +
            std::to_string(out->size());
    return false;
  }
  return true;
}

bool ReadZiplist(std::string_view blob, std::vector<RdbElement>* out, std::string* what) {
  constexpr size_t kHeader = 10;
  constexpr uint8_t kEnd = 0xFF;
  out->clear();
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  const size_t size = blob.size();
  if (size < kHeader + 1) {
    *what = "ziplist of " + std::to_string(size) + " bytes is shorter than its header";
    return false;
  }
  const uint64_t total = LoadLittle(p, 4);
  if (total != size) {
    *what = "ziplist header says " + std::to_string(total) + " bytes, the ziplist has " +
            std::to_string(size);
    return false;
  }
  if (p[size - 1] != kEnd) {
    *what = "ziplist does not end with its end byte";
    return false;
  }
  const uint64_t tail = LoadLittle(p + 4, 4);
  const size_t header_count = static_cast<size_t>(LoadLittle(p + 8, 2));
  const size_t end = size - 1;
  size_t pos = kHeader;
  size_t previous_size = 0;
  size_t last_start = kHeader;
  while (pos < end) {
    const size_t index = out->size();
    const size_t start = pos;
    uint64_t previous = p[pos];
    if (previous == 0xFE) {
      if (end - pos < 5) {
        *what = ElementError("ziplist", index, start, "truncated previous-entry length");
        return false;
      }
      previous = LoadLittle(p + pos + 1, 4);
      pos += 5;
    } else if (previous == kEnd) {
      *what = ElementError("ziplist", index, start, "end byte before the end of the ziplist");
      return false;
    } else {
      pos += 1;
    }
    if (previous != previous_size) {
      *what = ElementError("ziplist", index, start,
                           "previous-entry length does not match the entry before");
      return false;
    }
    if (pos >= end) {
      *what = ElementError("ziplist", index, start, "entry without an encoding");
      return false;
    }
    const uint8_t lead = p[pos];
    const size_t room = end - pos;
    RdbElement element;
    size_t head = 1;
    uint64_t data = 0;
    switch (lead >> 6) {
      case 0:
        data = lead & 0x3F;
        break;
      case 1:
        head = 2;
        if (room >= 2) data = uint64_t{lead & 0x3Fu} << 8 | p[pos + 1];
        break;
      case 2:
        head = 5;
        if (room >= 5) data = LoadBig(p + pos + 1, 4);
        break;
      default: {
        size_t width = 0;
        element.is_integer = true;
        if (lead == 0xC0) {
          width = 2;
        } else if (lead == 0xD0) {
          width = 4;
        } else if (lead == 0xE0) {
          width = 8;
        } else if (lead == 0xF0) {
          width = 3;
        } else if (lead == 0xFE) {
          width = 1;
        } else if (lead >= 0xF1 && lead <= 0xFD) {
          element.integer = (lead & 0x0F) - 1;
        } else {
          *what = ElementError("ziplist", index, start, "invalid encoding byte");
          return false;
        }
        head = 1 + width;
        if (width > 0 && room >= head) {
          element.integer = SignExtend(LoadLittle(p + pos + 1, width), static_cast<int>(8 * width));
        }
      }
    }
    if (head > room || data > room - head) {
      *what = ElementError("ziplist", index, start, "entry runs past the end of the ziplist");
      return false;
    }
    if (!element.is_integer) element.text = blob.substr(pos + head, static_cast<size_t>(data));
    out->push_back(element);
    pos += head + static_cast<size_t>(data);
    previous_size = pos - start;
    last_start = start;
  }
  if (tail != last_start) {
    *what = "ziplist tail offset " + std::to_string(tail) + " is not its last entry's (" +
            std::to_string(last_start) + ")";
    return false;
  }
  if (header_count != 65535 && header_count != out->size()) {
    *what = "ziplist header counts " + std::to_string(header_count) + " entries, it holds " +
            std::to_string(out->size());
    return false;
  }
  return true;
}

bool ReadZipmap(std::string_view blob, std::vector<RdbElement>* out, std::string* what) {
  constexpr uint8_t kBigLength = 254;
  constexpr uint8_t kEnd = 0xFF;
  out->clear();
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  const size_t size = blob.size();
  if (size < 2) {
    *what = "zipmap of " + std::to_string(size) + " bytes is shorter than its header";
    return false;
  }
  const uint8_t header_count = p[0];
  size_t pos = 1;
  // A length at pos: false when it does not fit before the blob's end.
  auto length = [&](uint64_t* n) {
    if (pos >= size) return false;
    if (p[pos] < kBigLength) {
      *n = p[pos++];
      return true;
    }
    if (p[pos] != kBigLength || size - pos < 5) return false;
    *n = LoadLittle(p + pos + 1, 4);
    pos += 5;
    return true;
  };
  while (true) {
    if (pos >= size) {
      *what = "zipmap ends without its end byte";
      return false;
    }
    if (p[pos] == kEnd) break;
    const size_t start = pos;
    const size_t pair = out->size() / 2;
    uint64_t key_length = 0, value_length = 0;
    if (!length(&key_length) || key_length > size - pos) {
      *what = ElementError("zipmap", 2 * pair, start, "key runs past the end of the zipmap");
      return false;
    }
    RdbElement key;
    key.text = blob.substr(pos, static_cast<size_t>(key_length));
    pos += static_cast<size_t>(key_length);
    if (!length(&value_length) || pos >= size) {
      *what = ElementError("zipmap", 2 * pair + 1, start, "truncated value length");
      return false;
    }
    const uint64_t free = p[pos++];
    if (value_length > size - pos || free > size - pos - value_length) {
      *what = ElementError("zipmap", 2 * pair + 1, start, "value runs past the end of the zipmap");
      return false;
    }
    RdbElement value;
    value.text = blob.substr(pos, static_cast<size_t>(value_length));
    pos += static_cast<size_t>(value_length + free);
    out->push_back(key);
    out->push_back(value);
  }
  if (pos != size - 1) {
    *what = "bytes after the zipmap's end byte";
    return false;
  }
  if (header_count < kBigLength && header_count != out->size() / 2) {
    *what = "zipmap header counts " + std::to_string(header_count) + " pairs, it holds " +
            std::to_string(out->size() / 2);
    return false;
  }
  return true;
}

bool ReadIntset(std::string_view blob, std::vector<int64_t>* out, std::string* what) {
  out->clear();
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  if (blob.size() < 8) {
    *what = "intset of " + std::to_string(blob.size()) + " bytes is shorter than its header";
    return false;
  }
  const uint64_t width = LoadLittle(p, 4);
  const uint64_t count = LoadLittle(p + 4, 4);
  if (width != 2 && width != 4 && width != 8) {
    *what = "intset width " + std::to_string(width) + " is not 2, 4 or 8";
    return false;
  }
  if (count * width != blob.size() - 8) {
    *what = "intset of " + std::to_string(count) + " values of " + std::to_string(width) +
            " bytes in " + std::to_string(blob.size() - 8) + " bytes";
    return false;
  }
  out->reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t v = SignExtend(LoadLittle(p + 8 + i * width, static_cast<size_t>(width)),
                                 static_cast<int>(8 * width));
    if (i > 0 && v <= out->back()) {
      *what = "intset values not strictly ascending at value " + std::to_string(i);
      return false;
    }
    out->push_back(v);
  }
  return true;
}

}  // namespace goblin
