// The `bit` library Redis gives its scripts: bit.tobit, tohex, bnot, band, bor, bxor, lshift,
// rshift, arshift, rol, ror and bswap on 32-bit integers, behaviour-compatible with LuaBitOp
// 1.0.2 as Redis patched it. See lua_bit.cc for the number conversion.
//
// luaopen_bit() registers the functions in the global table `bit` (through luaL_register, as
// Lua 5.1 modules do) and returns it.

#ifndef GOBLIN_LUA_BIT_H_
#define GOBLIN_LUA_BIT_H_

#include <lua.hpp>

extern "C" int luaopen_bit(lua_State* L);

#endif  // GOBLIN_LUA_BIT_H_
