// MessagePack for Lua 5.1, written to be byte-for-byte and error-for-error compatible with the
// `cmsgpack` module Redis ships to its scripts (lua-cmsgpack 0.4.0), so that Goblin Core scripts
// see exactly what Redis scripts see.
//
// Encoding (cmsgpack.pack(v1, ...)): every argument is encoded in turn and the encodings are
// concatenated; calling it with no argument is an argument error.
//   * nil, functions, userdata, threads, and tables nested 16 levels deep -> nil (0xc0). The
//     depth cap is what keeps self-referencing tables from recursing forever.
//   * booleans -> 0xc2 / 0xc3.
//   * numbers: Lua 5.1 only has doubles, so a number that converts to int64 without loss is
//     written as the smallest MessagePack integer that holds it (positive/negative fixint,
//     uint8..uint64 for n >= 0, int8..int64 for n < 0). Anything else (fractions, NaN, +-inf,
//     values beyond int64) becomes a float32 (0xca) when narrowing to float is lossless, otherwise
//     a float64 (0xcb). Floats are written big-endian.
//   * strings -> fixstr (< 32 bytes), str8 (0xd9), str16 (0xda) or str32 (0xdb).
//   * tables -> array when every key is a number k with k > 0, k fits an int, and the largest
//     key equals the key count (i.e. exactly the keys 1..n, the empty table included). Otherwise
//     a map, with pairs in lua_next() order.
//
// Decoding (unpack / unpack_one / unpack_limit): integers come back as Lua numbers (uint64 values
// above 2^63-1 wrap to negative, as in Redis), str8/16/32 and fixstr become strings, arrays
// become 1-based tables, maps become tables, bin/ext and the reserved byte 0xc1 are "Bad data
// format in input.", running out of bytes is "Missing bytes in input.".
//   unpack(s)                  -> every top-level object in s.
//   unpack_one(s[, off])       -> next_offset, obj        (next_offset is -1 once s is consumed)
//   unpack_limit(s, n[, off])  -> next_offset, obj1..objn
// Offsets are 0-based byte offsets. A limit and offset of 0 both mean "decode everything" and then
// no offset is returned; this quirk is kept because scripts can observe it.

#include "scripting/lua_cmsgpack.h"

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace goblin {
namespace {

constexpr int kMaxNesting = 16;
constexpr char kBufferMetatable[] = "goblin.cmsgpack.buffer";

// ------------------------------------------------------------------------------------------------
// Output buffer. It lives inside a Lua userdata with a __gc metamethod: a Lua error raised while
// encoding (out of memory, stack overflow) unwinds with longjmp, which would skip a C++
// destructor and leak; letting the collector free the bytes avoids that.

struct PackBuffer {
  unsigned char* data;
  size_t len;
  size_t cap;
};

int PackBufferGc(lua_State* L) {
  auto* buf = static_cast<PackBuffer*>(lua_touserdata(L, 1));
  std::free(buf->data);
  buf->data = nullptr;
  buf->len = buf->cap = 0;
  return 0;
}

PackBuffer* NewPackBuffer(lua_State* L) {
  auto* buf = static_cast<PackBuffer*>(lua_newuserdata(L, sizeof(PackBuffer)));
  buf->data = nullptr;
  buf->len = buf->cap = 0;
  luaL_getmetatable(L, kBufferMetatable);
  lua_setmetatable(L, -2);
  return buf;
}

void Append(lua_State* L, PackBuffer* buf, const void* bytes, size_t n) {
  if (buf->cap - buf->len < n) {
    if (n > SIZE_MAX / 4 - buf->len) luaL_error(L, "not enough memory");
    size_t cap = (buf->len + n) * 2;  // Doubling keeps appends amortised O(1).
    void* grown = std::realloc(buf->data, cap);
    if (grown == nullptr) luaL_error(L, "not enough memory");
    buf->data = static_cast<unsigned char*>(grown);
    buf->cap = cap;
  }
  if (n > 0) std::memcpy(buf->data + buf->len, bytes, n);
  buf->len += n;
}

// Writes `tag` followed by the low `width` bytes of `v`, most significant first (MessagePack is
// big-endian throughout).
void AppendTagged(lua_State* L, PackBuffer* buf, unsigned char tag, uint64_t v, int width) {
  unsigned char out[9];
  out[0] = tag;
  for (int i = 0; i < width; ++i) out[1 + i] = (v >> (8 * (width - 1 - i))) & 0xff;
  Append(L, buf, out, 1 + width);
}

// ------------------------------------------------------------------------------------------------
// Low-level encoders.

void EncodeInt(lua_State* L, PackBuffer* buf, int64_t n) {
  const uint64_t bits = static_cast<uint64_t>(n);
  if (n >= 0) {
    if (n <= 127) {
      unsigned char b = static_cast<unsigned char>(n);
      Append(L, buf, &b, 1);
    } else if (n <= 0xff) {
      AppendTagged(L, buf, 0xcc, bits, 1);
    } else if (n <= 0xffff) {
      AppendTagged(L, buf, 0xcd, bits, 2);
    } else if (n <= 0xffffffffLL) {
      AppendTagged(L, buf, 0xce, bits, 4);
    } else {
      AppendTagged(L, buf, 0xcf, bits, 8);
    }
  } else {
    if (n >= -32) {
      unsigned char b = static_cast<unsigned char>(bits & 0xff);
      Append(L, buf, &b, 1);
    } else if (n >= -128) {
      AppendTagged(L, buf, 0xd0, bits, 1);
    } else if (n >= -32768) {
      AppendTagged(L, buf, 0xd1, bits, 2);
    } else if (n >= -2147483648LL) {
      AppendTagged(L, buf, 0xd2, bits, 4);
    } else {
      AppendTagged(L, buf, 0xd3, bits, 8);
    }
  }
}

void EncodeDouble(lua_State* L, PackBuffer* buf, double d) {
  // Narrowing a finite double beyond FLT_MAX overflows to inf, which never compares equal to the
  // original, so such values take the float64 path just as the reference does.
  bool fits_float = !(std::isfinite(d) && std::fabs(d) > FLT_MAX);
  float f = fits_float ? static_cast<float>(d) : 0.0f;
  if (fits_float && static_cast<double>(f) == d) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    AppendTagged(L, buf, 0xca, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    AppendTagged(L, buf, 0xcb, bits, 8);
  }
}

// Header for a string / array / map of `n` elements. `fix` is the fix-format tag, `fix_max` its
// largest count, and `t8/t16/t32` the sized tags (t8 == 0 when the family has no 8-bit form).
void EncodeLength(lua_State* L, PackBuffer* buf, uint64_t n, unsigned char fix, uint64_t fix_max,
                  unsigned char t8, unsigned char t16, unsigned char t32) {
  if (n <= fix_max) {
    unsigned char b = static_cast<unsigned char>(fix | n);
    Append(L, buf, &b, 1);
  } else if (t8 != 0 && n <= 0xff) {
    AppendTagged(L, buf, t8, n, 1);
  } else if (n <= 0xffff) {
    AppendTagged(L, buf, t16, n, 2);
  } else {
    AppendTagged(L, buf, t32, n, 4);  // Lengths past 2^32 are truncated, as in the reference.
  }
}

// True when the double survives a round trip through int64. Out-of-range values and NaN are
// rejected explicitly instead of relying on what the hardware conversion happens to return.
bool IsInt64Equivalent(double n) {
  return n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
         static_cast<double>(static_cast<int64_t>(n)) == n;
}

bool IsIntEquivalent(double n) {
  return n >= static_cast<double>(INT_MIN) && n <= static_cast<double>(INT_MAX) &&
         static_cast<double>(static_cast<int>(n)) == n;
}

// ------------------------------------------------------------------------------------------------
// Lua value encoders. Each consumes the value on top of the stack.

void EncodeValue(lua_State* L, PackBuffer* buf, int level);

// A table is packed as an array only if its keys are exactly 1..n. Anything else (holes,
// fractional, negative or non-number keys) is a map so that no key is silently lost.
bool TableIsArray(lua_State* L) {
  int top = lua_gettop(L);
  int count = 0;
  int max = 0;
  luaL_checkstack(L, 2, "in function table_is_an_array");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    double n;
    if (lua_type(L, -1) != LUA_TNUMBER || (n = lua_tonumber(L, -1)) <= 0 || !IsIntEquivalent(n)) {
      lua_settop(L, top);
      return false;
    }
    int k = static_cast<int>(n);
    if (k > max) max = k;
    ++count;
  }
  lua_settop(L, top);
  return max == count;
}

void EncodeArray(lua_State* L, PackBuffer* buf, int level) {
  size_t len = lua_objlen(L, -1);
  EncodeLength(L, buf, len, 0x90, 15, 0, 0xdc, 0xdd);
  luaL_checkstack(L, 1, "in function mp_encode_lua_table_as_array");
  for (size_t j = 1; j <= len; ++j) {
    lua_pushnumber(L, static_cast<lua_Number>(j));
    lua_gettable(L, -2);
    EncodeValue(L, buf, level + 1);
  }
}

void EncodeMap(lua_State* L, PackBuffer* buf, int level) {
  // MessagePack needs the pair count up front and Lua cannot report it, so count first.
  size_t len = 0;
  luaL_checkstack(L, 3, "in function mp_encode_lua_table_as_map");
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pop(L, 1);
    ++len;
  }
  EncodeLength(L, buf, len, 0x80, 15, 0, 0xde, 0xdf);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    lua_pushvalue(L, -2);  // Encode a copy of the key: the original must stay for lua_next.
    EncodeValue(L, buf, level + 1);
    EncodeValue(L, buf, level + 1);
  }
}

void EncodeValue(lua_State* L, PackBuffer* buf, int level) {
  int type = lua_type(L, -1);
  if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      EncodeLength(L, buf, len, 0xa0, 31, 0xd9, 0xda, 0xdb);
      Append(L, buf, s, len);
      break;
    }
    case LUA_TBOOLEAN: {
      unsigned char b = lua_toboolean(L, -1) ? 0xc3 : 0xc2;
      Append(L, buf, &b, 1);
      break;
    }
    case LUA_TNUMBER: {
      double n = lua_tonumber(L, -1);
      if (IsInt64Equivalent(n)) {
        EncodeInt(L, buf, static_cast<int64_t>(lua_tointeger(L, -1)));
      } else {
        EncodeDouble(L, buf, n);
      }
      break;
    }
    case LUA_TTABLE:
      if (TableIsArray(L)) {
        EncodeArray(L, buf, level);
      } else {
        EncodeMap(L, buf, level);
      }
      break;
    default: {
      unsigned char b = 0xc0;
      Append(L, buf, &b, 1);
      break;
    }
  }
  lua_pop(L, 1);
}

int Pack(lua_State* L) {
  int nargs = lua_gettop(L);
  if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  if (!lua_checkstack(L, nargs)) {
    return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
  }
  PackBuffer* buf = NewPackBuffer(L);
  for (int i = 1; i <= nargs; ++i) {
    luaL_checkstack(L, 1, "in function mp_check");
    lua_pushvalue(L, i);
    EncodeValue(L, buf, 0);
  }
  lua_pushlstring(L, reinterpret_cast<const char*>(buf->data), buf->len);
  return 1;
}

// ------------------------------------------------------------------------------------------------
// Decoding.

enum class CursorError { kNone, kEof, kBadFormat };

struct Cursor {
  const unsigned char* p;
  size_t left;
  CursorError err;

  bool Need(size_t n) {
    if (left < n) {
      err = CursorError::kEof;
      return false;
    }
    return true;
  }
  void Consume(size_t n) {
    p += n;
    left -= n;
  }
  // Big-endian unsigned integer of `width` bytes starting `at` bytes past the cursor.
  uint64_t ReadBig(size_t at, int width) const {
    uint64_t v = 0;
    for (int i = 0; i < width; ++i) v = (v << 8) | p[at + i];
    return v;
  }
};

void DecodeValue(lua_State* L, Cursor* c);

void DecodeArray(lua_State* L, Cursor* c, size_t len) {
  lua_newtable(L);
  luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
  int index = 1;
  while (len--) {
    lua_pushnumber(L, index++);
    DecodeValue(L, c);
    if (c->err != CursorError::kNone) return;
    lua_settable(L, -3);
  }
}

void DecodeMap(lua_State* L, Cursor* c, size_t len) {
  lua_newtable(L);
  while (len--) {
    DecodeValue(L, c);
    if (c->err != CursorError::kNone) return;
    DecodeValue(L, c);
    if (c->err != CursorError::kNone) return;
    // A nil or NaN key raises Lua's own "table index is nil/NaN" error, as in the reference.
    lua_settable(L, -3);
  }
}

void PushString(lua_State* L, Cursor* c, size_t header, size_t len) {
  if (!c->Need(header + len)) return;
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p + header), len);
  c->Consume(header + len);
}

// Pushes exactly one value decoded from the cursor, or sets c->err (possibly leaving partial
// results on the stack; the caller raises an error in that case anyway).
void DecodeValue(lua_State* L, Cursor* c) {
  if (!c->Need(1)) return;
  // The number of top-level objects is unknown in advance, so grow the stack one slot at a time.
  luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
  const unsigned char tag = c->p[0];
  switch (tag) {
    case 0xc0:
      lua_pushnil(L);
      c->Consume(1);
      return;
    case 0xc2:
    case 0xc3:
      lua_pushboolean(L, tag == 0xc3);
      c->Consume(1);
      return;
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf: {
      const int width = 1 << (tag - 0xcc);
      if (!c->Need(1 + width)) return;
      // uint64 is pushed through the signed lua_Integer, so values >= 2^63 come out negative.
      lua_pushinteger(L, static_cast<lua_Integer>(c->ReadBig(1, width)));
      c->Consume(1 + width);
      return;
    }
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3: {
      const int width = 1 << (tag - 0xd0);
      if (!c->Need(1 + width)) return;
      uint64_t raw = c->ReadBig(1, width);
      int64_t v;
      switch (width) {
        case 1:
          v = static_cast<int8_t>(raw);
          break;
        case 2:
          v = static_cast<int16_t>(raw);
          break;
        case 4:
          v = static_cast<int32_t>(raw);
          break;
        default:
          v = static_cast<int64_t>(raw);
          break;
      }
      lua_pushnumber(L, static_cast<lua_Number>(v));
      c->Consume(1 + width);
      return;
    }
    case 0xca: {
      if (!c->Need(5)) return;
      uint32_t bits = static_cast<uint32_t>(c->ReadBig(1, 4));
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      lua_pushnumber(L, f);
      c->Consume(5);
      return;
    }
    case 0xcb: {
      if (!c->Need(9)) return;
      uint64_t bits = c->ReadBig(1, 8);
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      lua_pushnumber(L, d);
      c->Consume(9);
      return;
    }
    case 0xd9:
    case 0xda:
    case 0xdb: {
      const int width = 1 << (tag - 0xd9);
      if (!c->Need(1 + width)) return;
      PushString(L, c, 1 + width, static_cast<size_t>(c->ReadBig(1, width)));
      return;
    }
    case 0xdc:
    case 0xdd: {
      const int width = tag == 0xdc ? 2 : 4;
      if (!c->Need(1 + width)) return;
      size_t len = static_cast<size_t>(c->ReadBig(1, width));
      c->Consume(1 + width);
      DecodeArray(L, c, len);
      return;
    }
    case 0xde:
    case 0xdf: {
      const int width = tag == 0xde ? 2 : 4;
      if (!c->Need(1 + width)) return;
      size_t len = static_cast<size_t>(c->ReadBig(1, width));
      c->Consume(1 + width);
      DecodeMap(L, c, len);
      return;
    }
    default:
      break;
  }
  if ((tag & 0x80) == 0) {  // positive fixint
    lua_pushinteger(L, tag);
    c->Consume(1);
  } else if ((tag & 0xe0) == 0xe0) {  // negative fixint
    lua_pushinteger(L, static_cast<int8_t>(tag));
    c->Consume(1);
  } else if ((tag & 0xe0) == 0xa0) {  // fixstr
    PushString(L, c, 1, tag & 0x1f);
  } else if ((tag & 0xf0) == 0x90) {  // fixarray
    c->Consume(1);
    DecodeArray(L, c, tag & 0x0f);
  } else if ((tag & 0xf0) == 0x80) {  // fixmap
    c->Consume(1);
    DecodeMap(L, c, tag & 0x0f);
  } else {  // 0xc1, bin and ext families: not produced by pack, rejected like the reference.
    c->err = CursorError::kBadFormat;
  }
}

// Shared body of the three unpack entry points. Argument 1 is the input string; anything above it
// has already been removed by unpack_one/unpack_limit (unpack keeps extra args, which is harmless
// because only the values pushed here are returned).
int UnpackFull(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  const bool decode_all = limit == 0 && offset == 0;

  if (offset < 0 || limit < 0) {
    // The reference reports the input length where it says "limit"; kept for identical text.
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (decode_all) limit = INT_MAX;

  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - static_cast<size_t>(offset),
           CursorError::kNone};
  int count = 0;
  for (; c.left > 0 && count < limit; ++count) {
    DecodeValue(L, &c);
    if (c.err == CursorError::kEof) return luaL_error(L, "Missing bytes in input.");
    if (c.err == CursorError::kBadFormat) return luaL_error(L, "Bad data format in input.");
  }
  if (!decode_all) {
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
    lua_insert(L, 2);  // The offset is the first result, ahead of the decoded objects.
    ++count;
  }
  return count;
}

int Unpack(lua_State* L) { return UnpackFull(L, 0, 0); }

int UnpackOne(lua_State* L) {
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_settop(L, lua_gettop(L) > 0 ? 1 : 0);
  return UnpackFull(L, 1, offset);
}

int UnpackLimit(lua_State* L) {
  lua_Integer limit = luaL_checkinteger(L, 2);
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_settop(L, 1);
  return UnpackFull(L, limit, offset);
}

}  // namespace
}  // namespace goblin

extern "C" int luaopen_cmsgpack(lua_State* L) {
  luaL_newmetatable(L, goblin::kBufferMetatable);
  lua_pushcfunction(L, goblin::PackBufferGc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);

  lua_newtable(L);
  static const luaL_Reg kFunctions[] = {
      {"pack", goblin::Pack},
      {"unpack", goblin::Unpack},
      {"unpack_one", goblin::UnpackOne},
      {"unpack_limit", goblin::UnpackLimit},
  };
  for (const luaL_Reg& fn : kFunctions) {
    lua_pushcfunction(L, fn.func);
    lua_setfield(L, -2, fn.name);
  }
  // Same metadata strings as Redis's module, since scripts can read them.
  lua_pushliteral(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushliteral(L, "MessagePack C implementation for Lua");
  lua_setfield(L, -2, "_DESCRIPTION");

  lua_pushvalue(L, -1);
  lua_setglobal(L, "cmsgpack");  // Lua 5.1 convention: modules register a global.
  return 1;
}
