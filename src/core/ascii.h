// ASCII case folding for command names, option keywords and config names (Redis compares these
// with strcasecmp, which folds only ASCII letters; so do these), and Redis's quoting of
// arbitrary bytes for text meant to be read back (AppendRepr).
#pragma once

#include <string>
#include <string_view>

namespace goblin {

inline char AsciiToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
inline char AsciiToUpper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }

inline std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = AsciiToLower(c);
  return out;
}

inline std::string AsciiUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = AsciiToUpper(c);
  return out;
}

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiToLower(a[i]) != AsciiToLower(b[i])) return false;
  }
  return true;
}

// An option word compared as Redis's strcasecmp compares an argument: the argument ends at its
// first NUL byte ("nx\0junk" is NX).
inline bool WordIs(std::string_view arg, std::string_view word) {
  return EqualsIgnoreCase(arg.substr(0, arg.find('\0')), word);
}

// Bytes as lower-case hex, two digits a byte (password hashes, generated passwords).
inline std::string LowerHex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(bytes.size() * 2, '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    hex[2 * i] = kHex[byte >> 4];
    hex[2 * i + 1] = kHex[byte & 15];
  }
  return hex;
}

// Appends bytes as Redis's sdscatrepr writes them: in double quotes, with \\ \" \n \r \t \a
// \b escaped and every other byte outside 0x20..0x7e as \xHH (MONITOR lines, AOF manifests).
inline void AppendRepr(std::string* out, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  *out += '"';
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\\':
        *out += "\\\\";
        break;
      case '"':
        *out += "\\\"";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\a':
        *out += "\\a";
        break;
      case '\b':
        *out += "\\b";
        break;
      default:
        if (u >= 0x20 && u < 0x7f) {
          *out += c;
        } else {
          *out += "\\x";
          *out += kHex[u >> 4];
          *out += kHex[u & 15];
        }
    }
  }
  *out += '"';
}

}  // namespace goblin
