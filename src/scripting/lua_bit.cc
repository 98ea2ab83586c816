// The `bit` library Redis gives its scripts (LuaBitOp 1.0.2's interface), on 32-bit integers.
//
// Every argument is taken modulo 2^32 and read as a signed 32-bit integer, so bit.tobit(2^32 + 5)
// is 5 and bit.tobit(0xffffffff) is -1; results are signed too. The conversion adds 2^52 + 2^51
// to the double, which leaves the integer part of any number below 2^51 in the low 32 bits of
// the mantissa, rounding to nearest (what LuaBitOp does, so results match Redis's for fractions
// and huge numbers alike). A value that is not a number (nor a string that reads as one) is the
// usual "bad argument #n to 'name' (number expected, got X)".
//
// bit.tohex(x[, n]) prints the low |n| nibbles (default 8, at most 8), in capitals when n < 0.
// Redis's copy of LuaBitOp negated n = -2^31 into itself and wrote far past its 8-byte buffer
// (CVE-2024-31449); here the width is clamped before it is negated.

#include "scripting/lua_bit.h"

#include <cstdint>
#include <cstring>

namespace goblin {
namespace {

uint32_t BitArgument(lua_State* lua, int index) {
  double number = lua_tonumber(lua, index);
  if (number == 0 && !lua_isnumber(lua, index)) luaL_typerror(lua, index, "number");
  number += 6755399441055744.0;  // 2^52 + 2^51: the integer part lands in the low mantissa bits
  uint64_t bits;
  std::memcpy(&bits, &number, sizeof bits);
  return static_cast<uint32_t>(bits);
}

int PushBits(lua_State* lua, uint32_t bits) {
  lua_pushnumber(lua, static_cast<lua_Number>(static_cast<int32_t>(bits)));
  return 1;
}

int ToBit(lua_State* lua) { return PushBits(lua, BitArgument(lua, 1)); }
int Not(lua_State* lua) { return PushBits(lua, ~BitArgument(lua, 1)); }

template <typename Combine>
int Fold(lua_State* lua, Combine combine) {
  uint32_t bits = BitArgument(lua, 1);
  for (int index = lua_gettop(lua); index > 1; --index) {
    bits = combine(bits, BitArgument(lua, index));
  }
  return PushBits(lua, bits);
}

int And(lua_State* lua) {
  return Fold(lua, [](uint32_t a, uint32_t b) { return a & b; });
}
int Or(lua_State* lua) {
  return Fold(lua, [](uint32_t a, uint32_t b) { return a | b; });
}
int Xor(lua_State* lua) {
  return Fold(lua, [](uint32_t a, uint32_t b) { return a ^ b; });
}

// Shift counts are taken modulo 32.
template <typename Shift>
int ShiftBy(lua_State* lua, Shift shift) {
  const uint32_t bits = BitArgument(lua, 1);
  const uint32_t count = BitArgument(lua, 2) & 31;
  return PushBits(lua, shift(bits, count));
}

int LeftShift(lua_State* lua) {
  return ShiftBy(lua, [](uint32_t b, uint32_t n) { return b << n; });
}
int RightShift(lua_State* lua) {
  return ShiftBy(lua, [](uint32_t b, uint32_t n) { return b >> n; });
}
int ArithmeticRightShift(lua_State* lua) {
  return ShiftBy(lua, [](uint32_t b, uint32_t n) {
    return static_cast<uint32_t>(static_cast<int32_t>(b) >> n);
  });
}
int RotateLeft(lua_State* lua) {
  return ShiftBy(lua, [](uint32_t b, uint32_t n) { return (b << n) | (b >> ((32 - n) & 31)); });
}
int RotateRight(lua_State* lua) {
  return ShiftBy(lua, [](uint32_t b, uint32_t n) { return (b >> n) | (b << ((32 - n) & 31)); });
}

int ByteSwap(lua_State* lua) { return PushBits(lua, __builtin_bswap32(BitArgument(lua, 1))); }

int ToHex(lua_State* lua) {
  uint32_t bits = BitArgument(lua, 1);
  int32_t width = lua_isnone(lua, 2) ? 8 : static_cast<int32_t>(BitArgument(lua, 2));
  const char* digits = "0123456789abcdef";
  if (width < 0) {
    width = width < -8 ? 8 : -width;  // clamped first: -INT32_MIN does not exist
    digits = "0123456789ABCDEF";
  }
  if (width > 8) width = 8;
  char text[8];
  for (int i = width - 1; i >= 0; --i) {
    text[i] = digits[bits & 15];
    bits >>= 4;
  }
  lua_pushlstring(lua, text, static_cast<size_t>(width));
  return 1;
}

const luaL_Reg kFunctions[] = {
    {"tobit", ToBit},       {"bnot", Not},
    {"band", And},          {"bor", Or},
    {"bxor", Xor},          {"lshift", LeftShift},
    {"rshift", RightShift}, {"arshift", ArithmeticRightShift},
    {"rol", RotateLeft},    {"ror", RotateRight},
    {"bswap", ByteSwap},    {"tohex", ToHex},
    {nullptr, nullptr},
};

}  // namespace
}  // namespace goblin

extern "C" int luaopen_bit(lua_State* lua) {
  luaL_register(lua, "bit", goblin::kFunctions);
  return 1;
}
