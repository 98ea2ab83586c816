// Integer fields of 1 to 64 bits at any bit offset of a byte string, with the arithmetic of
// Redis's BITFIELD command (bitops.c). Pure functions over caller-owned bytes: no key, no reply.
//
// Bits are numbered as SETBIT numbers them: bit 0 is the most significant bit of byte 0. A field
// of width w at offset o covers bits o .. o+w-1, its first bit the most significant, so a field
// aligned to bytes is a big-endian integer:
//
//   SET u5 at offset 7 to 23 (10111b) in zeros:   byte 0        byte 1
//                                                 0000000 1 | 0111 0000
//                                                         ^---^^^^ the field
//
// Invariants and rules:
//  1. A type is iN (signed, N = 1..64, two's complement) or uN (unsigned, N = 1..63: a u64 value
//     could not be replied as a signed 64-bit integer). Every field value fits an int64.
//  2. Reading past the end of the string reads zeros; writing needs the bytes to exist (the
//     command grows the string to the highest bit it writes before writing anything).
//  3. INCRBY is exact arithmetic: it overflows when old + increment leaves [min, max] of the
//     type. WRAP keeps the low N bits (sign-extended for iN), SAT clamps to the bound crossed,
//     FAIL writes nothing.
//  4. SET checks the value as Redis does, which is not always the exact rule:
//     - uN reads the value as an unsigned 64-bit number, so any negative value is above max:
//       SAT stores max, WRAP its low N bits.
//     - iN (N < 64) computes max - value in 64 bits; when that wraps (value <= INT64_MIN + max,
//       far below min) the value counts as above max, so SAT stores max, not min. WRAP and FAIL
//       do not care which bound was crossed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace goblin::bitfield {

struct FieldType {
  bool is_signed = false;
  int bits = 0;  // 1..64 signed, 1..63 unsigned
};

enum class Overflow { kWrap, kSat, kFail };

// Parses "i<N>" or "u<N>" as Redis does: the digits after the letter run up to the first NUL
// and follow string2ll's rules. False for anything else (u64, i0, i65, "I8", ...).
bool ParseType(std::string_view text, FieldType* type);

// The field at bit `offset` of bytes[0..size), zeros past the end (rule 2), sign-extended for a
// signed type.
int64_t Get(const uint8_t* bytes, size_t size, uint64_t offset, FieldType type);

// Writes value's low type.bits bits at bit `offset`.
// REQUIRES: (offset + type.bits - 1) / 8 < the size of bytes.
void Put(uint8_t* bytes, uint64_t offset, FieldType type, int64_t value);

// What a SET or INCRBY stores: `failed` when the mode is FAIL and the result is out of range
// (nothing is stored, the reply is nil); otherwise `value` (rules 3 and 4).
struct Outcome {
  bool failed = false;
  int64_t value = 0;
};
Outcome ForSet(FieldType type, int64_t value, Overflow mode);
// REQUIRES: old is a value of the type (what Get returned).
Outcome ForIncrement(FieldType type, int64_t old, int64_t increment, Overflow mode);

}  // namespace goblin::bitfield
