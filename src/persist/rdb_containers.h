// Redis's packed containers as RDB files hold them, read with every byte checked: the listpack
// (core/listpack.h draws it), and the older ziplist, zipmap and intset that Redis before 7.0
// wrote and every Redis still loads. Each reader validates the whole blob before it hands out
// an element (what Redis's sanitize-dump-payload yes does): headers against the blob's size,
// every element's encoding and bounds, the links between elements, the end marker, the
// element count.
//
//   ziplist := [total bytes u32 LE][offset of the last entry u32 LE][count u16 LE] entry*
//              [0xFF]                          count 65535: unknown, count the entries
//   entry   := [previous entry's size: 1 byte < 254, or 0xFE + u32 LE][encoding][data]
//     encoding 00xxxxxx            string of x bytes
//              01xxxxxx yyyyyyyy   string of 14-bit length (big-endian)
//              10xxxxxx + u32 BE   string of 32-bit length (the x bits are ignored)
//              0xC0 int16 LE, 0xD0 int32 LE, 0xE0 int64 LE, 0xF0 int24 LE, 0xFE int8,
//              0xF1..0xFD          the integer (byte & 0x0F) - 1, that is 0..12
//
//   zipmap  := [count u8; 254: unknown] ([key length][key][value length][free u8][value]
//              [free bytes])* [0xFF]
//     length: 1 byte < 254, or 0xFE + u32 LE
//
//   intset  := [width u32 LE: 2, 4 or 8][count u32 LE][count values of width bytes, LE,
//              strictly ascending]
//
// Elements are views into the blob (or integers); they live as long as the blob does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace goblin {

// One element of a listpack or ziplist: an integer, or bytes.
struct RdbElement {
  std::string_view text;  // when !is_integer
  int64_t integer = 0;
  bool is_integer = false;

  // The element as text: the bytes, or the integer's decimal text formatted into scratch
  // (at least 21 bytes).
  std::string_view Text(char* scratch) const;
};

// Each reader replaces *out with the blob's elements in order, or returns false with *what
// saying what is wrong (*out is then unspecified).
bool ReadListpack(std::string_view blob, std::vector<RdbElement>* out, std::string* what);
bool ReadZiplist(std::string_view blob, std::vector<RdbElement>* out, std::string* what);
// A zipmap's keys and values, alternating.
bool ReadZipmap(std::string_view blob, std::vector<RdbElement>* out, std::string* what);
// An intset's values, ascending.
bool ReadIntset(std::string_view blob, std::vector<int64_t>* out, std::string* what);

}  // namespace goblin
