#include "core/bitfield.h"

#include <algorithm>
#include <cstring>

#include "core/string_number.h"

namespace goblin::bitfield {
namespace {

using Wide = unsigned __int128;

uint64_t Mask(int bits) { return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

int64_t MaxOf(FieldType type) {
  return static_cast<int64_t>(Mask(type.is_signed ? type.bits - 1 : type.bits));
}

int64_t MinOf(FieldType type) { return type.is_signed ? -MaxOf(type) - 1 : 0; }

// The low type.bits bits of raw as a value of the type (sign-extended when signed).
int64_t Truncate(FieldType type, uint64_t raw) {
  const uint64_t mask = Mask(type.bits);
  raw &= mask;
  if (type.is_signed && type.bits < 64 && (raw >> (type.bits - 1)) != 0) raw |= ~mask;
  return static_cast<int64_t>(raw);
}

// The `count` bytes at bytes[0..count) as one big-endian number (count <= 9).
Wide LoadBigEndian(const uint8_t* bytes, size_t count) {
  Wide word = 0;
  for (size_t i = 0; i < count; ++i) word = (word << 8) | bytes[i];
  return word;
}

Outcome Resolve(FieldType type, bool above, bool below, uint64_t raw, Overflow mode) {
  if (!above && !below) return Outcome{.value = static_cast<int64_t>(raw)};
  switch (mode) {
    case Overflow::kWrap:
      return Outcome{.value = Truncate(type, raw)};
    case Overflow::kSat:
      return Outcome{.value = above ? MaxOf(type) : MinOf(type)};
    case Overflow::kFail:
      break;
  }
  return Outcome{.failed = true};
}

}  // namespace

bool ParseType(std::string_view text, FieldType* type) {
  if (text.empty() || (text[0] != 'i' && text[0] != 'u')) return false;
  std::string_view digits = text.substr(1);
  digits = digits.substr(0, digits.find('\0'));
  int64_t bits;
  if (!ParseInt64(digits, &bits)) return false;
  const bool is_signed = text[0] == 'i';
  if (bits < 1 || bits > (is_signed ? 64 : 63)) return false;
  *type = FieldType{.is_signed = is_signed, .bits = static_cast<int>(bits)};
  return true;
}

int64_t Get(const uint8_t* bytes, size_t size, uint64_t offset, FieldType type) {
  // Nine bytes hold any 64-bit field whatever its first bit's place in its byte.
  uint8_t window[9] = {};
  const uint64_t first = offset >> 3;
  if (first < size) std::memcpy(window, bytes + first, std::min<uint64_t>(9, size - first));
  const int shift = 72 - static_cast<int>(offset & 7) - type.bits;
  return Truncate(type, static_cast<uint64_t>(LoadBigEndian(window, 9) >> shift));
}

void Put(uint8_t* bytes, uint64_t offset, FieldType type, int64_t value) {
  uint8_t* start = bytes + (offset >> 3);
  const int lead = static_cast<int>(offset & 7);
  const size_t count = static_cast<size_t>((lead + type.bits + 7) / 8);
  const int shift = static_cast<int>(count) * 8 - lead - type.bits;
  Wide word = LoadBigEndian(start, count);
  const Wide mask = static_cast<Wide>(Mask(type.bits)) << shift;
  word = (word & ~mask) | ((static_cast<Wide>(static_cast<uint64_t>(value)) << shift) & mask);
  for (size_t i = count; i-- > 0;) {
    start[i] = static_cast<uint8_t>(word);
    word >>= 8;
  }
}

Outcome ForSet(FieldType type, int64_t value, Overflow mode) {
  const auto raw = static_cast<uint64_t>(value);
  if (!type.is_signed) return Resolve(type, raw > Mask(type.bits), false, raw, mode);
  if (type.bits == 64) return Outcome{.value = value};
  const int64_t max = MaxOf(type);
  // Rule 4: Redis's max - value, which wraps for values far below min.
  const bool difference_wraps = static_cast<__int128>(max) - value > INT64_MAX;
  const bool above = value > max || difference_wraps;
  return Resolve(type, above, !above && value < MinOf(type), raw, mode);
}

Outcome ForIncrement(FieldType type, int64_t old, int64_t increment, Overflow mode) {
  const __int128 sum = static_cast<__int128>(old) + increment;
  return Resolve(type, sum > MaxOf(type), sum < MinOf(type), static_cast<uint64_t>(sum), mode);
}

}  // namespace goblin::bitfield
