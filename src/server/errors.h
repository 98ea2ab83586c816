// Error replies shared by the command families, with Redis's exact texts. A reply text is
// written once here and never retyped in a command.
#pragma once

#include <string>
#include <string_view>

namespace goblin::errors {

// User text quoted in an error, as Redis's printf-style "%s" shows it: up to its first NUL.
inline std::string Quote(std::string_view text) {
  return std::string(text.substr(0, text.find('\0')));
}

inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
inline constexpr std::string_view kSameObject = "ERR source and destination objects are the same";
inline constexpr std::string_view kNoAuth = "NOAUTH Authentication required.";
inline constexpr std::string_view kOutOfMemory =
    "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr std::string_view kInvalidExpire = "ERR invalid expire time in '%s' command";
inline constexpr std::string_view kStringTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
inline constexpr std::string_view kOffsetOutOfRange = "ERR offset is out of range";
inline constexpr std::string_view kNotFloatOrInf = "ERR increment would produce NaN or Infinity";
inline constexpr std::string_view kPositive = "ERR value is out of range, must be positive";

}  // namespace goblin::errors
