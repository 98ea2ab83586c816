// MessagePack bindings for Lua 5.1, behaviour-compatible with the `cmsgpack` library that Redis
// embeds in its scripting engine (lua-cmsgpack 0.4.0).
//
// luaopen_cmsgpack() builds a table with pack, unpack, unpack_one and unpack_limit, stores it in
// the global `cmsgpack` (Lua 5.1 modules are expected to register themselves globally) and
// returns it. See lua_cmsgpack.cc for the exact encoding rules.

#ifndef GOBLIN_LUA_CMSGPACK_H_
#define GOBLIN_LUA_CMSGPACK_H_

#include <lua.hpp>

extern "C" int luaopen_cmsgpack(lua_State* L);

#endif  // GOBLIN_LUA_CMSGPACK_H_
