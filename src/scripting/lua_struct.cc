// Binary struct packing for Lua 5.1, matching the `struct` library that Redis 7.0 exposes to
// scripts (struct.c 1.4 with Redis's bounds and overflow hardening), down to the error texts.
//
//   struct.pack(fmt, v1, ...)   -> string
//   struct.unpack(fmt, s[, i])  -> v1, ..., next_i   (i is a 1-based start offset, default 1)
//   struct.size(fmt)            -> number of bytes pack(fmt, ...) produces
//
// Format options (processed left to right; there is no '=' option):
//   '>' / '<'  big / little endian for what follows (default: native, little on x86)
//   '!n'       maximum alignment n (power of 2; plain '!' means 8, the alignment of double)
//   ' '        ignored
//   'x'        one zero byte of padding (skipped when unpacking)
//   'b' 'B'    signed / unsigned char (1 byte)      'h' 'H'  short (2)
//   'l' 'L'    long (8)                             'T'      size_t (8)
//   'i' 'I'    int, optionally sized: 'i3', 'I16'... (default 4, at most 32 bytes; bytes past the
//              eighth carry no value since the arithmetic is 64-bit)
//   'f' 'd'    float (4) / double (8), raw IEEE bytes
//   'cn'       n raw bytes. Packing 'c0' (or 'c' + the whole string) uses the full string;
//              unpacking 'c0' takes its length from the number unpacked just before it.
//   's'        zero-terminated string
// Any other character is "invalid format option 'X'" (struct.size only rejects non-alphanumeric
// ones; unknown letters there count as zero bytes, as in the reference).
// Items are aligned to min(item size, '!' alignment) relative to the start of the data; 'c' and
// 's' are never aligned. Numbers are converted to integers the way the reference's C casts do on
// x86-64 (out-of-range values saturate to 0x8000000000000000 or wrap to 0); that is emulated
// explicitly here so the result does not depend on undefined behaviour.

#include "scripting/lua_struct.h"

#include <cctype>
#include <climits>
#include <cstdint>
#include <cstring>

namespace goblin {
namespace {

constexpr int kMaxIntSize = 32;
constexpr int kMaxAlign = 8;  // Alignment of double on the platforms Redis targets.

enum class Endian { kBig, kLittle };

constexpr Endian NativeEndian() {
  return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? Endian::kLittle : Endian::kBig;
}

struct Header {
  Endian endian = NativeEndian();
  int align = 1;
};

bool IsPowerOf2(int x) { return x > 0 && (x & (x - 1)) == 0; }

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Reads an optional decimal count following an option letter; `def` when there is none. Counts
// that would overflow an int are an error rather than silently wrapping.
int GetNum(lua_State* L, const char** fmt, int def) {
  if (!IsDigit(**fmt)) return def;
  int a = 0;
  do {
    int digit = **fmt - '0';
    if (a > INT_MAX / 10 || a * 10 > INT_MAX - digit) luaL_error(L, "integral size overflow");
    a = a * 10 + digit;
    ++*fmt;
  } while (IsDigit(**fmt));
  return a;
}

// Byte size of an option, consuming its count if it takes one. Control options report 0 here;
// their argument (for '!') is parsed later by ControlOption.
size_t OptSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
      return sizeof(char);
    case 'H':
    case 'h':
      return sizeof(short);
    case 'L':
    case 'l':
      return sizeof(long);
    case 'T':
      return sizeof(size_t);
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'x':
      return 1;
    case 'c':
      return static_cast<size_t>(GetNum(L, fmt, 1));
    case 'i':
    case 'I': {
      int size = GetNum(L, fmt, sizeof(int));
      if (size > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      }
      return static_cast<size_t>(size);
    }
    default:
      return 0;
  }
}

// Padding needed before an item of `size` bytes at offset `len`. The formula is the reference's
// bit trick; it is applied even for sizes that are not powers of two (e.g. 'i3' under '!4') so
// that such odd layouts come out identical.
size_t PaddingFor(size_t len, const Header& h, char opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > static_cast<size_t>(h.align)) size = static_cast<size_t>(h.align);
  return (size - (len & (size - 1))) & (size - 1);
}

void ControlOption(lua_State* L, char opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      h->endian = Endian::kBig;
      return;
    case '<':
      h->endian = Endian::kLittle;
      return;
    case '!': {
      int a = GetNum(L, fmt, kMaxAlign);
      if (!IsPowerOf2(a)) luaL_error(L, "alignment %d is not a power of 2", a);
      h->align = a;
      return;
    }
    default: {
      const char* msg = lua_pushfstring(L, "invalid format option '%c'", opt);
      luaL_argerror(L, 1, msg);
    }
  }
}

// double -> uint64 the way GCC's x86-64 code for a C cast behaves: NaN and anything below
// 2^63 go through a signed conversion (which yields 0x8000000000000000 when out of range), and
// values of 2^64 and above come out as 0.
uint64_t CastToUint64(double n) {
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr uint64_t kIndefinite = 0x8000000000000000ULL;
  if (!(n >= kTwo63)) {
    if (n != n || n < -kTwo63) return kIndefinite;
    return static_cast<uint64_t>(static_cast<int64_t>(n));
  }
  double rest = n - kTwo63;
  if (rest >= kTwo63) return 0;
  return static_cast<uint64_t>(static_cast<int64_t>(rest)) ^ kIndefinite;
}

// double -> int64 -> uint64, for negative inputs (saturates to INT64_MIN like cvttsd2si).
uint64_t CastNegativeToUint64(double n) {
  if (n < -9223372036854775808.0) return 0x8000000000000000ULL;
  return static_cast<uint64_t>(static_cast<int64_t>(n));
}

void ReverseIfForeign(unsigned char* bytes, size_t size, Endian endian) {
  if (endian == NativeEndian()) return;
  for (size_t i = 0, j = size - 1; i < j; ++i, --j) {
    unsigned char t = bytes[i];
    bytes[i] = bytes[j];
    bytes[j] = t;
  }
}

// A float or double stored at bytes in the given byte order.
template <typename Floating>
Floating ReadFloating(const unsigned char* bytes, Endian endian) {
  unsigned char raw[sizeof(Floating)];
  std::memcpy(raw, bytes, sizeof(raw));
  ReverseIfForeign(raw, sizeof(raw), endian);
  Floating value;
  std::memcpy(&value, raw, sizeof(value));
  return value;
}

void PutInteger(lua_State* L, luaL_Buffer* b, int arg, Endian endian, int size) {
  lua_Number n = luaL_checknumber(L, arg);
  uint64_t value = n < 0 ? CastNegativeToUint64(n) : CastToUint64(n);
  char out[kMaxIntSize];
  for (int i = 0; i < size; ++i) {
    int at = endian == Endian::kLittle ? i : size - 1 - i;
    out[at] = static_cast<char>(value & 0xff);
    value >>= 8;  // Past the eighth byte this is 0, so wide integers are zero-extended.
  }
  luaL_addlstring(b, out, static_cast<size_t>(size));
}

int Pack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  int arg = 2;
  size_t total = 0;
  lua_pushnil(L);  // Keeps the argument slots apart from the buffer's stack usage.
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    size_t pad = PaddingFor(total, h, opt, size);
    total += pad;
    for (; pad > 0; --pad) luaL_addchar(&b, '\0');
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I':
        PutInteger(L, &b, arg++, h.endian, static_cast<int>(size));
        break;
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        float f = static_cast<float>(luaL_checknumber(L, arg++));
        unsigned char bytes[sizeof(f)];
        std::memcpy(bytes, &f, sizeof(f));
        ReverseIfForeign(bytes, sizeof(f), h.endian);
        luaL_addlstring(&b, reinterpret_cast<char*>(bytes), sizeof(f));
        break;
      }
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        unsigned char bytes[sizeof(d)];
        std::memcpy(bytes, &d, sizeof(d));
        ReverseIfForeign(bytes, sizeof(d), h.endian);
        luaL_addlstring(&b, reinterpret_cast<char*>(bytes), sizeof(d));
        break;
      }
      case 'c':
      case 's': {
        size_t len;
        const char* s = luaL_checklstring(L, arg++, &len);
        if (size == 0) size = len;
        // The reference blames the argument after the string (arg was already advanced); the
        // message is kept identical.
        luaL_argcheck(L, len >= size, arg, "string too short");
        luaL_addlstring(&b, s, size);
        if (opt == 's') {
          luaL_addchar(&b, '\0');
          ++size;
        }
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

lua_Number GetInteger(const unsigned char* bytes, Endian endian, bool is_signed, int size) {
  uint64_t v = 0;
  for (int i = 0; i < size; ++i) {
    v = (v << 8) | bytes[endian == Endian::kBig ? i : size - 1 - i];
  }
  if (!is_signed) return static_cast<lua_Number>(v);
  // The reference shifts by size*8-1, which x86 reduces modulo 64 (so 'i0' and wide sizes get
  // their sign from a bit inside the low 64); reproduce that instead of shifting out of range.
  uint64_t mask = ~uint64_t{0} << ((size * 8 - 1) & 63);
  if (v & mask) v |= mask;
  return static_cast<lua_Number>(static_cast<int64_t>(v));
}

bool FitsAt(size_t pos, size_t size, size_t len) { return size <= len && pos <= len - size; }

int Unpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t len;
  const char* data = luaL_checklstring(L, 2, &len);
  // Converted to size_t before the check, so negative offsets pass it and then fail the bounds
  // check as "data string too short", exactly like Redis.
  size_t pos = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
  --pos;
  int results = 0;
  Header h;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    pos += PaddingFor(pos, h, opt, size);
    luaL_argcheck(L, FitsAt(pos, size, len), 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");  // Room for this item and the final offset.
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I': {
        bool is_signed = std::islower(static_cast<unsigned char>(opt)) != 0;
        lua_pushnumber(L, GetInteger(bytes + pos, h.endian, is_signed, static_cast<int>(size)));
        ++results;
        break;
      }
      case 'x':
        break;
      case 'f':
        lua_pushnumber(L, ReadFloating<float>(bytes + pos, h.endian));
        ++results;
        break;
      case 'd':
        lua_pushnumber(L, ReadFloating<double>(bytes + pos, h.endian));
        ++results;
        break;
      case 'c': {
        if (size == 0) {
          // The length is the previous result (any number-convertible value), which is
          // consumed rather than returned.
          if (results == 0 || !lua_isnumber(L, -1)) {
            luaL_error(L, "format 'c0' needs a previous size");
          }
          double n = lua_tonumber(L, -1);
          size = static_cast<size_t>(n < 0 ? CastNegativeToUint64(n) : CastToUint64(n));
          lua_pop(L, 1);
          --results;
          luaL_argcheck(L, FitsAt(pos, size, len), 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        ++results;
        break;
      }
      case 's': {
        const void* end = std::memchr(data + pos, '\0', len - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        ++results;
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return results + 1;
}

int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  size_t pos = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    size_t size = OptSize(L, opt, &fmt);
    pos += PaddingFor(pos, h, opt, size);
    if (opt == 's') {
      luaL_argerror(L, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    }
    if (!std::isalnum(static_cast<unsigned char>(opt))) ControlOption(L, opt, &fmt, &h);
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace
}  // namespace goblin

int luaopen_struct(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"pack", goblin::Pack},
      {"unpack", goblin::Unpack},
      {"size", goblin::Size},
      {nullptr, nullptr},
  };
  luaL_register(L, "struct", kFunctions);
  return 1;
}
