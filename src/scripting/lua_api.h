// The Lua C API as the scripting layer uses it, and the libraries Goblin adds to Lua.
#pragma once

#include <lua.hpp>

#include "scripting/lua_bit.h"
#include "scripting/lua_cmsgpack.h"
#include "scripting/lua_struct.h"

namespace goblin {

class LuaVm;

// Sets the global `redis`: call, pcall, error_reply, status_reply, sha1hex, log, setresp,
// set_repl, replicate_commands, breakpoint, debug, acl_check_cmd and the constants (LOG_*,
// REPL_*, REDIS_VERSION, REDIS_VERSION_NUM). Its functions reach vm's running call.
void InstallRedisLibrary(LuaVm* vm);
// Adds log, the LOG_* levels and the version constants to the table on top of the stack: with
// register_function, all of `redis` that library code may use while FUNCTION LOAD runs it.
void InstallLogFunctions(LuaVm* vm);

// The LuaVm a library function was registered for (its first upvalue).
inline LuaVm* VmOf(lua_State* lua) {
  return static_cast<LuaVm*>(lua_touserdata(lua, lua_upvalueindex(1)));
}

// Registers fn as field name of the table on top of the stack, with vm as its upvalue.
inline void SetVmFunction(lua_State* lua, LuaVm* vm, const char* name, lua_CFunction fn) {
  lua_pushlightuserdata(lua, vm);
  lua_pushcclosure(lua, fn, 1);
  lua_setfield(lua, -2, name);
}

}  // namespace goblin
