// Cells: how hashes and sets store one string (a field, a value or a member) in packed memory,
// and the normalized form in which a string is looked up.
//
// Redis keeps a listpack element that looks like an integer as an integer. Goblin does the same
// in every form, small and large: a string that ParseInt64 accepts is stored as its value.
// ParseInt64 accepts only canonical text (no '+', no leading zeros, no "-0", no spaces), so
// formatting the value gives back exactly the bytes that came in: "007", "-0", "+1" and
// 20-digit overflows stay strings, "0" and "-9223372036854775808" become integers.
//
//   lead byte     cell                                          size
//   0x00..0x7F    string of `lead` bytes                        1 + n
//   0x80          string, varint length n (>= 128), n bytes     1 + varint(n) + n
//   0x81..0x88    integer v >= 0 in (lead - 0x80) bytes, LE     2..9
//   0x89..0x90    integer v < 0, ~v in (lead - 0x88) bytes, LE  2..9
//   0x91..0xFB    integer lead - 0x91, that is 0..106           1
//   0xFC, 0xFD    dead-entry markers (entry_pages.h); never the start of a cell
//   0xFE          deadline prefix: 6 bytes LE, a unix time in ms (> 0), then the cell it
//                 belongs to. Only a hash's value cell carries one (its field's expiry,
//                 HEXPIRE); sets, lists and fields never do.                7 + the cell
//   0xFF          never written
//
// Examples: "user:00000001" costs 14 bytes, the user id 10000001 4 bytes (3 value bytes), the
// unix time 1700000000 5 bytes, a counter "3" 1 byte, "" 1 byte.
//
// Integer cells hash their 8 value bytes, string cells their text: both sides of a lookup
// normalize the same way, so equal text always meets equal hash and equal cell.
//
// Invariants:
//  1. A cell holds an integer exactly when ParseInt64 accepts its text.
//  2. Decoding trusts the bytes (they were written by EncodeCell), except DecodeCellChecked,
//     which bounds-checks everything for data read back from a dump.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/hashing.h"
#include "core/string_number.h"
#include "core/varint.h"

namespace goblin {

namespace cell_internal {
inline constexpr uint8_t kLongString = 0x80;
inline constexpr uint8_t kPositiveBase = 0x80;  // + byte count 1..8
inline constexpr uint8_t kNegativeBase = 0x88;  // + byte count 1..8
inline constexpr uint8_t kSmallBase = 0x91;
inline constexpr int64_t kSmallMax = 0xFB - kSmallBase;  // 106
inline constexpr uint8_t kShortStringMax = 0x7F;
inline constexpr uint8_t kDeadlinePrefix = 0xFE;
inline constexpr size_t kDeadlineBytes = 6;

// Bytes needed for u > 0 little-endian (1..8); 1 for 0.
inline size_t ValueBytes(uint64_t u) {
  return u == 0 ? 1 : static_cast<size_t>((64 - __builtin_clzll(u) + 7) / 8);
}
inline uint64_t LoadBytes(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  std::memcpy(&v, p, n);  // little-endian host (x86-64)
  return v;
}
}  // namespace cell_internal

// Characters in the decimal text of v.
inline size_t IntegerTextLength(int64_t v) {
  uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  size_t n = v < 0 ? 2 : 1;
  while (u >= 10) {
    u /= 10;
    ++n;
  }
  return n;
}

// The largest deadline a cell can carry, in unix ms (2^48 - 1, the year 10889); Redis's
// field deadlines stop at 2^46 - 1.
inline constexpr int64_t kMaxCellDeadline = (int64_t{1} << 48) - 1;

// A string about to be stored or looked up, normalized: integer or bytes.
struct CellInput {
  std::string_view text;  // the bytes as given (unused when made by Integer())
  int64_t integer = 0;
  bool is_integer = false;
  // A hash value's deadline in unix ms (1..kMaxCellDeadline), 0 for none.
  int64_t deadline_ms = 0;

  static CellInput Of(std::string_view text) {
    CellInput c;
    c.text = text;
    c.is_integer = ParseInt64(text, &c.integer);
    return c;
  }
  static CellInput Integer(int64_t v) {
    CellInput c;
    c.integer = v;
    c.is_integer = true;
    return c;
  }

  // Bytes of the encoded cell, its deadline prefix included.
  size_t EncodedSize() const {
    using namespace cell_internal;
    const size_t prefix = deadline_ms != 0 ? 1 + kDeadlineBytes : 0;
    if (is_integer) {
      if (integer >= 0 && integer <= kSmallMax) return prefix + 1;
      const uint64_t u =
          integer >= 0 ? static_cast<uint64_t>(integer) : ~static_cast<uint64_t>(integer);
      return prefix + 1 + ValueBytes(u);
    }
    return prefix + (text.size() <= kShortStringMax ? 1 + text.size()
                                                    : 1 + VarintSize(text.size()) + text.size());
  }
  // Length of the text this cell stands for (HSTRLEN, the listpack value limit).
  size_t TextLength() const { return is_integer ? IntegerTextLength(integer) : text.size(); }
};

// A lookup key: a normalized string and its seeded hash.
struct PackedKey : CellInput {
  uint64_t hash = 0;

  static uint64_t HashOf(const CellInput& c) {
    if (!c.is_integer) return HashBytes(c.text);
    char bytes[8];
    std::memcpy(bytes, &c.integer, 8);
    return HashBytes(std::string_view(bytes, 8));
  }
  static PackedKey Of(std::string_view text) {
    PackedKey k;
    static_cast<CellInput&>(k) = CellInput::Of(text);
    k.hash = HashOf(k);
    return k;
  }
  static PackedKey From(const CellInput& c) {
    PackedKey k;
    static_cast<CellInput&>(k) = c;
    k.hash = HashOf(c);
    return k;
  }
};

// A decoded cell.
struct CellView {
  std::string_view bytes;  // when !is_integer
  int64_t integer = 0;
  bool is_integer = false;
  int64_t deadline_ms = 0;  // the deadline prefix's time, 0 when the cell has none

  // The text: the bytes themselves, or the integer formatted into scratch.
  // REQUIRES: scratch holds kInt64TextMax bytes.
  std::string_view Text(char* scratch) const {
    return is_integer ? std::string_view(scratch, FormatInt64(integer, scratch)) : bytes;
  }
  size_t TextLength() const { return is_integer ? IntegerTextLength(integer) : bytes.size(); }
  // The same cell to encode again, its deadline included.
  CellInput AsInput() const {
    CellInput c;
    c.text = bytes;
    c.integer = integer;
    c.is_integer = is_integer;
    c.deadline_ms = deadline_ms;
    return c;
  }
};

// Writes the cell at p; returns the byte after it. REQUIRES: room for c.EncodedSize() bytes.
inline uint8_t* EncodeCell(uint8_t* p, const CellInput& c) {
  using namespace cell_internal;
  if (c.deadline_ms != 0) {
    *p++ = kDeadlinePrefix;
    const uint64_t deadline = static_cast<uint64_t>(c.deadline_ms);
    std::memcpy(p, &deadline, kDeadlineBytes);  // little-endian host (x86-64)
    p += kDeadlineBytes;
  }
  if (c.is_integer) {
    if (c.integer >= 0 && c.integer <= kSmallMax) {
      *p++ = static_cast<uint8_t>(kSmallBase + c.integer);
      return p;
    }
    const bool negative = c.integer < 0;
    const uint64_t u =
        negative ? ~static_cast<uint64_t>(c.integer) : static_cast<uint64_t>(c.integer);
    const size_t n = ValueBytes(u);
    *p++ = static_cast<uint8_t>((negative ? kNegativeBase : kPositiveBase) + n);
    std::memcpy(p, &u, n);
    return p + n;
  }
  if (c.text.size() <= kShortStringMax) {
    *p++ = static_cast<uint8_t>(c.text.size());
  } else {
    *p++ = kLongString;
    p = PutVarint(p, c.text.size());
  }
  if (!c.text.empty()) std::memcpy(p, c.text.data(), c.text.size());
  return p + c.text.size();
}

// Decodes the cell at p into *out; returns the byte after it.
inline const uint8_t* DecodeCell(const uint8_t* p, CellView* out) {
  using namespace cell_internal;
  out->deadline_ms = 0;
  if (*p == kDeadlinePrefix) [[unlikely]] {
    out->deadline_ms = static_cast<int64_t>(LoadBytes(p + 1, kDeadlineBytes));
    p += 1 + kDeadlineBytes;
  }
  const uint8_t lead = *p++;
  if (lead <= kShortStringMax) {
    out->is_integer = false;
    out->bytes = std::string_view(reinterpret_cast<const char*>(p), lead);
    return p + lead;
  }
  if (lead == kLongString) {
    uint64_t n;
    p = GetVarint(p, &n);
    out->is_integer = false;
    out->bytes = std::string_view(reinterpret_cast<const char*>(p), n);
    return p + n;
  }
  out->is_integer = true;
  out->bytes = std::string_view();
  if (lead >= kSmallBase) {
    out->integer = lead - kSmallBase;
    return p;
  }
  if (lead <= kNegativeBase) {
    const size_t n = lead - kPositiveBase;
    out->integer = static_cast<int64_t>(LoadBytes(p, n));
    return p + n;
  }
  const size_t n = lead - kNegativeBase;
  out->integer = static_cast<int64_t>(~LoadBytes(p, n));
  return p + n;
}

// The byte after the cell at p.
inline const uint8_t* SkipCell(const uint8_t* p) {
  using namespace cell_internal;
  if (*p == kDeadlinePrefix) [[unlikely]] p += 1 + kDeadlineBytes;
  const uint8_t lead = *p;
  if (lead <= kShortStringMax) return p + 1 + lead;
  if (lead == kLongString) {
    uint64_t n;
    const uint8_t* q = GetVarint(p + 1, &n);
    return q + n;
  }
  if (lead >= kSmallBase) return p + 1;
  return p + 1 + (lead <= kNegativeBase ? lead - kPositiveBase : lead - kNegativeBase);
}
inline uint8_t* SkipCell(uint8_t* p) {
  return const_cast<uint8_t*>(SkipCell(static_cast<const uint8_t*>(p)));
}

// The deadline of the cell at p (unix ms), 0 when it has none.
inline int64_t CellDeadline(const uint8_t* p) {
  using namespace cell_internal;
  return *p == kDeadlinePrefix ? static_cast<int64_t>(LoadBytes(p + 1, kDeadlineBytes)) : 0;
}

// Whether the cell at p, which carries no deadline (a field or a member), holds the key's
// string.
inline bool CellMatches(const uint8_t* p, const CellInput& key) {
  using namespace cell_internal;
  const uint8_t lead = *p;
  if (!key.is_integer) {
    if (lead <= kShortStringMax) {
      return lead == key.text.size() && std::memcmp(p + 1, key.text.data(), lead) == 0;
    }
    if (lead != kLongString) return false;
    uint64_t n;
    const uint8_t* q = GetVarint(p + 1, &n);
    return n == key.text.size() && std::memcmp(q, key.text.data(), n) == 0;
  }
  if (lead <= kLongString || lead > 0xFB) return false;
  CellView v;
  DecodeCell(p, &v);
  return v.integer == key.integer;
}

// DecodeCellChecked's part after a deadline prefix: the cell itself.
inline const uint8_t* DecodeCellCheckedBody(const uint8_t* p, const uint8_t* end, CellView* out) {
  using namespace cell_internal;
  const uint8_t lead = *p;
  if (lead == kLongString) {
    uint64_t n = 0;
    const uint8_t* q = GetVarintChecked(p + 1, end, &n);
    if (q == nullptr || n <= kShortStringMax || n > static_cast<uint64_t>(end - q)) return nullptr;
    out->is_integer = false;
    out->bytes = std::string_view(reinterpret_cast<const char*>(q), n);
    return q + n;
  }
  if (lead > 0xFB) return nullptr;
  if (lead < kSmallBase && lead > kLongString) {
    const size_t n = lead <= kNegativeBase ? lead - kPositiveBase : lead - kNegativeBase;
    if (static_cast<size_t>(end - p) < 1 + n) return nullptr;
  } else if (lead <= kShortStringMax && static_cast<size_t>(end - p) < 1u + lead) {
    return nullptr;
  }
  const uint8_t* next = DecodeCell(p, out);
  if (out->is_integer && CellInput::Integer(out->integer).EncodedSize() != size_t(next - p)) {
    return nullptr;
  }
  if (!out->is_integer) {
    // A string cell must not hold text that ParseInt64 accepts (invariant 1).
    int64_t ignored;
    if (ParseInt64(out->bytes, &ignored)) return nullptr;
  }
  return next;
}

// DecodeCell for untrusted bytes in [p, end): returns nullptr when the cell runs past end or
// is not a canonical cell (an integer in more bytes than needed, a short string written long,
// a deadline prefix where with_deadline is false, or with a time of 0).
inline const uint8_t* DecodeCellChecked(const uint8_t* p, const uint8_t* end, CellView* out,
                                        bool with_deadline = false) {
  using namespace cell_internal;
  if (p >= end) return nullptr;
  int64_t deadline = 0;
  if (*p == kDeadlinePrefix) {
    if (!with_deadline || static_cast<size_t>(end - p) < 1 + kDeadlineBytes) return nullptr;
    deadline = static_cast<int64_t>(LoadBytes(p + 1, kDeadlineBytes));
    if (deadline == 0) return nullptr;
    p += 1 + kDeadlineBytes;
    if (p >= end) return nullptr;
  }
  const uint8_t* next = DecodeCellCheckedBody(p, end, out);
  out->deadline_ms = deadline;
  return next;
}

// SplitMix64: the random source the sampling functions take, so tests can replay them.
inline uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// Uniform in [0, n). REQUIRES: n > 0.
inline uint64_t RandomBelow(uint64_t* state, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(NextRandom(state)) * n) >> 64);
}

}  // namespace goblin
