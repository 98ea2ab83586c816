// Binary struct packing for Lua 5.1, behaviour-compatible with the `struct` library (Roberto
// Ierusalimschy's struct.c 1.4, as patched by Redis) that Redis exposes to its scripts.
//
// luaopen_struct() registers struct.pack, struct.unpack and struct.size in the global table
// `struct` (created through luaL_register, as Lua 5.1 modules do) and returns it. The format
// language is documented at the top of lua_struct.cc.

#ifndef GOBLIN_LUA_STRUCT_H_
#define GOBLIN_LUA_STRUCT_H_

#include <lua.hpp>

extern "C" int luaopen_struct(lua_State* L);

#endif  // GOBLIN_LUA_STRUCT_H_
