// Conversions between numbers and the decimal text Redis reads and writes, with Redis's exact
// acceptance rules, so that "is this an integer?" has one answer everywhere in Goblin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

// The longest text FormatInt64 produces ("-9223372036854775808") plus room.
constexpr size_t kInt64TextMax = 21;

// Strict decimal integer, as Redis's string2ll: optional '-', no '+', no spaces, no leading
// zeros ("0" alone is fine, "-0" is not), at most 20 characters, within int64.
bool ParseInt64(std::string_view text, int64_t* value);

// Writes the decimal text of v into buf and returns its length.
size_t FormatInt64(int64_t v, char* buf);
std::string Int64ToString(int64_t v);

// As Redis's string2ld (used by INCRBYFLOAT): strtold over the whole text; rejects empty text,
// a leading space, trailing bytes, NaN, and overflow to +-inf or underflow to 0.
bool ParseLongDouble(std::string_view text, long double* value);

// As Redis's ld2string(LD_STR_HUMAN): "%.17Lf" with trailing zeros and dot trimmed, and "-0"
// written as "0". REQUIRES: v is finite.
std::string FormatLongDoubleHuman(long double v);

// As Redis's getDoubleFromObject / zset score parsing: strtod over the whole text; accepts
// "inf", "-inf", "+inf"; rejects empty text, a leading space, trailing bytes, NaN, and
// overflow or underflow of the text itself.
bool ParseDouble(std::string_view text, double* value);

// Redis 7.2's double text (util.c d2string, used for every double reply and stored score):
//  1. "nan", "inf", "-inf", "0" and "-0".
//  2. An integral value with |v| <= 2^62 as a plain integer: 1e18 -> "1000000000000000000".
//  3. Anything else from Grisu2's digits D (at most 17; they round-trip, and are the shortest
//     for all but about 0.1% of doubles) and exponent K, v = D * 10^K, E = K + len(D) - 1:
//       K >= 0 and |E| < len(D) + 7    D then K zeros        1e23 -> "99999999999999990000000"
//       K < 0 and (K > -7 or |E| < 4)  plain decimal         1e-6 -> "0.000001"
//       otherwise                      d.ddd, 'e', sign, |E| 1e-7 -> "1e-7", 1e20 -> "1e+20",
//                                                            12345.678901234567 ->
//                                                            "1.2345678901234567e+4"
//     with a leading '-' for negative values; at most 25 bytes in all.
std::string FormatDouble(double v);

}  // namespace goblin
