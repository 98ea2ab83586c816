#include "scripting/lua_vm.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "core/string_number.h"
#include "resp/reply_builder.h"
#include "scripting/lua_api.h"
#include "scripting/sha1.h"

// lua-cjson (deps/lua-cjson) has no header of its own.
extern "C" int luaopen_cjson(lua_State* lua);

namespace goblin {
namespace {

// The busy check runs every this many VM instructions (as often as Redis checks).
constexpr int kHookInstructions = 100000;
// A full incremental GC step every this many calls, as Redis does.
constexpr uint32_t kGcPeriod = 50;

// --- rand48: the generator Redis gives math.random ---------------------------------------

// One generator for the whole process, never reseeded between scripts (Redis 7): it starts from
// rand48's default state, so every server draws the same sequence from its start.
uint64_t g_rand48 = 0x1234ABCD330EULL;

void Rand48Seed(int32_t seed) {
  g_rand48 =
      (static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 16 | 0x330E) & ((1ULL << 48) - 1);
}

int32_t Rand48Next() {
  g_rand48 = (g_rand48 * 0x5DEECE66DULL + 0xB) & ((1ULL << 48) - 1);
  return static_cast<int32_t>(g_rand48 >> 17);
}

int MathRandom(lua_State* lua) {
  constexpr int32_t kMax = 0x7fffffff;
  lua_Number r = static_cast<lua_Number>(Rand48Next() % kMax) / static_cast<lua_Number>(kMax);
  switch (lua_gettop(lua)) {
    case 0:
      lua_pushnumber(lua, r);
      break;
    case 1: {
      int upper = luaL_checkint(lua, 1);
      luaL_argcheck(lua, 1 <= upper, 1, "interval is empty");
      lua_pushnumber(lua, std::floor(r * upper) + 1);
      break;
    }
    case 2: {
      int lower = luaL_checkint(lua, 1);
      int upper = luaL_checkint(lua, 2);
      luaL_argcheck(lua, lower <= upper, 2, "interval is empty");
      lua_pushnumber(lua, std::floor(r * (upper - lower + 1)) + lower);
      break;
    }
    default:
      return luaL_error(lua, "wrong number of arguments");
  }
  return 1;
}

int MathRandomSeed(lua_State* lua) {
  Rand48Seed(static_cast<int32_t>(luaL_checkint(lua, 1)));
  return 0;
}

// The one function of Lua's os library that Redis 7.4 gives scripts: the process's CPU time in
// seconds, for a script to time its own work. Nothing else of os (files, the environment,
// exit) is reachable.
int OsClock(lua_State* lua) {
  lua_pushnumber(lua, static_cast<lua_Number>(std::clock()) / CLOCKS_PER_SEC);
  return 1;
}

// --- Globals --------------------------------------------------------------------------------

int ReadonlyError(lua_State* lua) { return luaL_error(lua, "Attempt to modify a readonly table"); }

int NonexistentGlobal(lua_State* lua) {
  const char* name = lua_type(lua, 2) == LUA_TSTRING ? lua_tostring(lua, 2) : "?";
  return luaL_error(lua, "Script attempted to access nonexistent global variable '%s'", name);
}

// __index of the globals proxy: upvalue 1 holds the registry slot of the backing table.
int GlobalIndex(lua_State* lua) {
  lua_rawgeti(lua, LUA_REGISTRYINDEX, static_cast<int>(lua_tointeger(lua, lua_upvalueindex(1))));
  lua_pushvalue(lua, 2);
  lua_rawget(lua, -2);
  return lua_isnil(lua, -1) ? NonexistentGlobal(lua) : 1;
}

// __index of a strict proxy: upvalue 1 is the table behind it.
int StrictIndex(lua_State* lua) {
  lua_pushvalue(lua, 2);
  lua_rawget(lua, lua_upvalueindex(1));
  return lua_isnil(lua, -1) ? NonexistentGlobal(lua) : 1;
}

// Pushes the metatable of a read-only proxy, without its __index.
void PushProxyMetatable(lua_State* lua) {
  lua_newtable(lua);
  lua_pushcfunction(lua, ReadonlyError);
  lua_setfield(lua, -2, "__newindex");
  lua_pushboolean(lua, 0);
  lua_setfield(lua, -2, "__metatable");
}

// The error handler every call runs under (Redis's __redis__err__handler): a string error
// becomes {err = "ERR " .. message}; the table gets the source and line of the Lua code that
// raised it (the caller of a C function such as redis.call or error).
int ErrorHandler(lua_State* lua) {
  lua_Debug frame;
  bool found = lua_getstack(lua, 1, &frame) && lua_getinfo(lua, "Sl", &frame);
  if (found && std::strcmp(frame.what, "C") == 0) {
    found = lua_getstack(lua, 2, &frame) && lua_getinfo(lua, "Sl", &frame);
  }
  if (!lua_istable(lua, 1)) {
    // tostring(error), without reading the globals (library code loads where there are none).
    lua_pushliteral(lua, "ERR ");
    switch (lua_type(lua, 1)) {
      case LUA_TSTRING:
      case LUA_TNUMBER:
        lua_pushvalue(lua, 1);
        break;
      case LUA_TNIL:
        lua_pushliteral(lua, "nil");
        break;
      case LUA_TBOOLEAN:
        lua_pushstring(lua, lua_toboolean(lua, 1) ? "true" : "false");
        break;
      default:
        lua_pushfstring(lua, "%s: %p", luaL_typename(lua, 1), lua_topointer(lua, 1));
        break;
    }
    lua_concat(lua, 2);
    lua_newtable(lua);
    lua_insert(lua, -2);
    lua_setfield(lua, -2, "err");
    lua_replace(lua, 1);
  }
  if (found) {
    lua_pushstring(lua, frame.source);
    lua_setfield(lua, 1, "source");
    lua_pushinteger(lua, frame.currentline);
    lua_setfield(lua, 1, "line");
  }
  lua_settop(lua, 1);
  return 1;
}

// Read-only tables are proxies (the sandbox, point 2): next, pairs and rawget see through them
// to the table behind, so that a script can still list a library. goblin.proxies maps each
// proxy to its table.
void PushUnproxied(lua_State* lua, int index) {
  lua_getfield(lua, LUA_REGISTRYINDEX, "goblin.proxies");
  lua_pushvalue(lua, index);
  lua_rawget(lua, -2);
  if (lua_isnil(lua, -1)) {
    lua_pop(lua, 2);
    lua_pushvalue(lua, index);
    return;
  }
  lua_remove(lua, -2);
}

int NextFunction(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  lua_settop(lua, 2);
  PushUnproxied(lua, 1);
  lua_replace(lua, 1);
  if (lua_next(lua, 1) != 0) return 2;
  lua_pushnil(lua);
  return 1;
}

int PairsFunction(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  lua_pushcfunction(lua, NextFunction);
  PushUnproxied(lua, 1);
  lua_pushnil(lua);
  return 3;
}

bool IsProxy(lua_State* lua, int index) {
  lua_getfield(lua, LUA_REGISTRYINDEX, "goblin.proxies");
  lua_pushvalue(lua, index);
  lua_rawget(lua, -2);
  const bool proxy = !lua_isnil(lua, -1);
  lua_pop(lua, 2);
  return proxy;
}

// rawset and setmetatable refuse the read-only tables, as Redis's read-only flag makes them
// (Redis's message carries no script position here).
int ReadonlyRefusal(lua_State* lua) {
  lua_pushliteral(lua, "Attempt to modify a readonly table");
  return lua_error(lua);
}

int RawSetFunction(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  luaL_checkany(lua, 2);
  luaL_checkany(lua, 3);
  if (IsProxy(lua, 1)) return ReadonlyRefusal(lua);
  lua_settop(lua, 3);
  lua_rawset(lua, 1);
  return 1;
}

int SetMetatableFunction(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  const int type = lua_type(lua, 2);
  luaL_argcheck(lua, type == LUA_TNIL || type == LUA_TTABLE, 2, "nil or table expected");
  if (IsProxy(lua, 1)) return ReadonlyRefusal(lua);
  if (luaL_getmetafield(lua, 1, "__metatable")) {
    return luaL_error(lua, "cannot change a protected metatable");
  }
  lua_settop(lua, 2);
  lua_setmetatable(lua, 1);
  return 1;
}

// getmetatable answers for the read-only tables as Redis's patched Lua does, where they are
// plain tables with a read-only flag: nil for the library tables, and for the globals the
// read-only table Redis protects them with (kept in the registry by InstallGlobalsProxy).
int GetMetatableFunction(lua_State* lua) {
  luaL_checkany(lua, 1);
  if (IsProxy(lua, 1)) {
    lua_getfield(lua, LUA_REGISTRYINDEX, "goblin.globals");
    if (lua_rawequal(lua, 1, -1)) {
      lua_getfield(lua, LUA_REGISTRYINDEX, "goblin.globals.metatable");
    } else {
      lua_pushnil(lua);
    }
    return 1;
  }
  if (!lua_getmetatable(lua, 1)) {
    lua_pushnil(lua);
    return 1;
  }
  luaL_getmetafield(lua, 1, "__metatable");
  return 1;
}

int RawGetFunction(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  luaL_checkany(lua, 2);
  PushUnproxied(lua, 1);
  lua_pushvalue(lua, 2);
  lua_rawget(lua, -2);
  return 1;
}

// The global pcall: as Lua's, but an error table ({err = ...}) reaches the caller as its message
// (Redis overrides pcall so that redis.call errors read like strings).
int ProtectedCallFunction(lua_State* lua) {
  luaL_checkany(lua, 1);
  if (lua_pcall(lua, lua_gettop(lua) - 1, LUA_MULTRET, 0) != 0) {
    if (lua_istable(lua, -1)) {
      lua_getfield(lua, -1, "err");
      if (lua_type(lua, -1) == LUA_TSTRING) {
        lua_replace(lua, -2);
      } else {
        lua_pop(lua, 1);
      }
    }
    lua_pushboolean(lua, 0);
    lua_insert(lua, -2);
    return 2;
  }
  lua_pushboolean(lua, 1);
  lua_insert(lua, 1);
  return lua_gettop(lua);
}

void Hook(lua_State* lua, lua_Debug*) {
  lua_getfield(lua, LUA_REGISTRYINDEX, "goblin.vm");
  auto* vm = static_cast<LuaVm*>(lua_touserdata(lua, -1));
  lua_pop(lua, 1);
  if (vm->host() == nullptr) return;
  if (!vm->CheckInterrupt()) return;
  // Once killed, every line raises again, so a pcall loop cannot swallow the kill.
  lua_sethook(lua, Hook, LUA_MASKLINE, 0);
  PushErrorTable(lua, vm->interrupt_error());
  lua_error(lua);
}

}  // namespace

// --- The VM ---------------------------------------------------------------------------------

// Lua's allocator, counting the interpreter's bytes and refusing to grow past the limit: a
// script that allocates without end gets "not enough memory" instead of taking the server's.
void* LuaVm::Allocate(void* self, void* block, size_t old_size, size_t new_size) {
  auto* vm = static_cast<LuaVm*>(self);
  if (new_size == 0) {
    std::free(block);
    vm->bytes_ -= old_size;
    return nullptr;
  }
  if (new_size > old_size && vm->memory_limit_ > 0 &&
      vm->bytes_ + (new_size - old_size) > vm->memory_limit_) {
    return nullptr;
  }
  void* grown = std::realloc(block, new_size);
  if (grown == nullptr) return nullptr;
  vm->bytes_ = vm->bytes_ - old_size + new_size;
  return grown;
}

LuaVm::LuaVm(Purpose purpose) : lua_(lua_newstate(&LuaVm::Allocate, this)), purpose_(purpose) {
  lua_pushlightuserdata(lua_, this);
  lua_setfield(lua_, LUA_REGISTRYINDEX, "goblin.vm");
  OpenLibraries();
  InstallRedisLibrary(this);
  InstallGlobalsProxy();
}

LuaVm::~LuaVm() {
  // A full collection first, while every object is still alive: closing a state whose
  // collector a script left stopped or mid-cycle freed objects a later step still reached
  // (Redis's fix for CVE-2024-46981, on SCRIPT FLUSH and FUNCTION FLUSH).
  lua_gc(lua_, LUA_GCCOLLECT, 0);
  lua_close(lua_);
}

void LuaVm::OpenLibraries() {
  struct Library {
    const char* name;
    lua_CFunction open;
  };
  static const Library kLibraries[] = {
      {"", luaopen_base},
      {LUA_TABLIBNAME, luaopen_table},
      {LUA_STRLIBNAME, luaopen_string},
      {LUA_MATHLIBNAME, luaopen_math},
      {"cjson", luaopen_cjson},
      {"bit", luaopen_bit},
      {"cmsgpack", luaopen_cmsgpack},
      {"struct", luaopen_struct},
  };
  for (const Library& library : kLibraries) {
    lua_pushcfunction(lua_, library.open);
    lua_pushstring(lua_, library.name);
    lua_call(lua_, 1, 1);
    // cjson returns its table without setting a global; the others set one too.
    if (library.name[0] != '\0' && lua_istable(lua_, -1)) lua_setglobal(lua_, library.name);
    lua_settop(lua_, 0);
  }
  // Nothing that reaches files, the module system or the environment of other functions.
  for (const char* name :
       {"dofile", "loadfile", "print", "setfenv", "getfenv", "newproxy", "module", "require"}) {
    lua_pushnil(lua_);
    lua_setglobal(lua_, name);
  }
  lua_getglobal(lua_, LUA_MATHLIBNAME);
  lua_pushcfunction(lua_, MathRandom);
  lua_setfield(lua_, -2, "random");
  lua_pushcfunction(lua_, MathRandomSeed);
  lua_setfield(lua_, -2, "randomseed");
  lua_pop(lua_, 1);
  lua_newtable(lua_);
  lua_pushcfunction(lua_, OsClock);
  lua_setfield(lua_, -2, "clock");
  lua_setglobal(lua_, "os");
  lua_pushcfunction(lua_, ErrorHandler);
  lua_setglobal(lua_, "__redis__err__handler");
  lua_pushcfunction(lua_, ProtectedCallFunction);
  lua_setglobal(lua_, "pcall");
  lua_pushcfunction(lua_, NextFunction);
  lua_setglobal(lua_, "next");
  lua_pushcfunction(lua_, PairsFunction);
  lua_setglobal(lua_, "pairs");
  lua_pushcfunction(lua_, RawGetFunction);
  lua_setglobal(lua_, "rawget");
  lua_pushcfunction(lua_, RawSetFunction);
  lua_setglobal(lua_, "rawset");
  lua_pushcfunction(lua_, SetMetatableFunction);
  lua_setglobal(lua_, "setmetatable");
  lua_pushcfunction(lua_, GetMetatableFunction);
  lua_setglobal(lua_, "getmetatable");
  lua_newtable(lua_);  // goblin.proxies, weak: a dropped proxy does not keep its table
  lua_newtable(lua_);
  lua_pushliteral(lua_, "k");
  lua_setfield(lua_, -2, "__mode");
  lua_setmetatable(lua_, -2);
  lua_setfield(lua_, LUA_REGISTRYINDEX, "goblin.proxies");
}

namespace {

// Records that the proxy on top of the stack stands for the table just below it.
void RegisterProxy(lua_State* lua) {
  lua_getfield(lua, LUA_REGISTRYINDEX, "goblin.proxies");
  lua_pushvalue(lua, -2);
  lua_pushvalue(lua, -4);
  lua_rawset(lua, -3);
  lua_pop(lua, 1);
}

}  // namespace

void LuaVm::ProtectTableOnTop() {
  lua_newtable(lua_);  // the proxy
  PushProxyMetatable(lua_);
  lua_pushvalue(lua_, -3);
  lua_setfield(lua_, -2, "__index");
  lua_setmetatable(lua_, -2);
  RegisterProxy(lua_);
  lua_replace(lua_, -2);
}

void LuaVm::StrictTableOnTop() {
  lua_newtable(lua_);
  PushProxyMetatable(lua_);
  lua_pushvalue(lua_, -3);
  lua_pushcclosure(lua_, StrictIndex, 1);
  lua_setfield(lua_, -2, "__index");
  lua_setmetatable(lua_, -2);
  RegisterProxy(lua_);
  lua_replace(lua_, -2);
}

void LuaVm::InstallGlobalsProxy() {
  // The library tables become read-only proxies inside the (still writable) globals.
  for (const char* name : {LUA_TABLIBNAME, LUA_STRLIBNAME, LUA_MATHLIBNAME, "cjson", "bit",
                           "cmsgpack", "struct", "redis", "coroutine", "os"}) {
    lua_getglobal(lua_, name);
    if (!lua_istable(lua_, -1)) {
      lua_pop(lua_, 1);
      continue;
    }
    ProtectTableOnTop();
    lua_setglobal(lua_, name);
  }
  ProtectStringMetatable();
  lua_pushvalue(lua_, LUA_GLOBALSINDEX);
  globals_ref_ = luaL_ref(lua_, LUA_REGISTRYINDEX);

  lua_newtable(lua_);  // the proxy scripts see as their globals
  PushProxyMetatable(lua_);
  lua_pushinteger(lua_, current_globals_slot());
  lua_pushcclosure(lua_, GlobalIndex, 1);
  lua_setfield(lua_, -2, "__index");
  lua_setmetatable(lua_, -2);
  lua_pushvalue(lua_, LUA_GLOBALSINDEX);
  lua_insert(lua_, -2);
  RegisterProxy(lua_);
  lua_remove(lua_, -2);
  lua_pushvalue(lua_, -1);
  lua_setfield(lua_, LUA_GLOBALSINDEX, "_G");  // the backing table's _G names the proxy
  lua_replace(lua_, LUA_GLOBALSINDEX);
  lua_pushvalue(lua_, LUA_GLOBALSINDEX);
  lua_setfield(lua_, LUA_REGISTRYINDEX, "goblin.globals");

  // What getmetatable(_G) answers, read-only: Redis's globals metatable, whose __index raises
  // the nonexistent-global error.
  lua_newtable(lua_);
  lua_pushcfunction(lua_, NonexistentGlobal);
  lua_setfield(lua_, -2, "__index");
  ProtectTableOnTop();
  lua_setfield(lua_, LUA_REGISTRYINDEX, "goblin.globals.metatable");
}

void LuaVm::ProtectStringMetatable() {
  // Every string shares one metatable, {__index = string}, which no global reaches: left
  // writable, one script could plant a function in it that a later script (another user's)
  // runs on its first s:method() call (CVE-2025-46818). Its __index becomes the read-only
  // string library, and getmetatable("") answers a read-only proxy of it. Strings are the
  // only values of a basic type with a metatable (scripts have no debug.setmetatable).
  lua_pushliteral(lua_, "");
  lua_getmetatable(lua_, -1);
  lua_getglobal(lua_, LUA_STRLIBNAME);
  lua_setfield(lua_, -2, "__index");
  lua_pushvalue(lua_, -1);
  ProtectTableOnTop();
  lua_setfield(lua_, -2, "__metatable");
  lua_pop(lua_, 2);
}

int LuaVm::current_globals_slot() {
  // GlobalIndex reads the backing table through one fixed registry slot, so that switching
  // the backing table is one assignment.
  if (slot_ref_ == 0) {
    lua_rawgeti(lua_, LUA_REGISTRYINDEX, globals_ref_);
    slot_ref_ = luaL_ref(lua_, LUA_REGISTRYINDEX);
  }
  return slot_ref_;
}

void LuaVm::SetGlobalsFromStack() { lua_rawseti(lua_, LUA_REGISTRYINDEX, current_globals_slot()); }

void LuaVm::RestoreGlobals() {
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, globals_ref_);
  lua_rawseti(lua_, LUA_REGISTRYINDEX, current_globals_slot());
}

bool LuaVm::Compile(std::string_view body, std::string* error, int* handle) {
  const char* chunk = purpose_ == Purpose::kEval ? "@user_script" : "@user_function";
  if (luaL_loadbuffer(lua_, body.data(), body.size(), chunk) != 0) {
    *error = lua_tostring(lua_, -1) != nullptr ? lua_tostring(lua_, -1) : "unknown error";
    lua_pop(lua_, 1);
    return false;
  }
  *handle = luaL_ref(lua_, LUA_REGISTRYINDEX);
  return true;
}

void LuaVm::Release(int handle) { luaL_unref(lua_, LUA_REGISTRYINDEX, handle); }

void LuaVm::PushErrorHandler() { lua_pushcfunction(lua_, ErrorHandler); }

namespace {

void PushStringArray(lua_State* lua, std::span<const std::string_view> values) {
  lua_createtable(lua, static_cast<int>(values.size()), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    lua_pushlstring(lua, values[i].data(), values[i].size());
    lua_rawseti(lua, -2, static_cast<int>(i + 1));
  }
}

}  // namespace

void LuaVm::Run(const Invocation& invocation) {
  lua_State* lua = lua_;
  lua_settop(lua, 0);
  lua_pushcfunction(lua, ErrorHandler);
  lua_rawgeti(lua, LUA_REGISTRYINDEX, invocation.handle);
  int nargs = 0;
  if (invocation.keys_as_globals) {
    lua_rawgeti(lua, LUA_REGISTRYINDEX, globals_ref_);
    PushStringArray(lua, invocation.keys);
    lua_setfield(lua, -2, "KEYS");
    PushStringArray(lua, invocation.args);
    lua_setfield(lua, -2, "ARGV");
    lua_pop(lua, 1);
  } else {
    PushStringArray(lua, invocation.keys);
    PushStringArray(lua, invocation.args);
    nargs = 2;
  }
  host_ = invocation.host;
  resp_ = 2;
  lua_sethook(lua, Hook, LUA_MASKCOUNT, kHookInstructions);
  memory_limit_ = invocation.memory_limit;
  int status = lua_pcall(lua, nargs, 1, 1);
  memory_limit_ = 0;
  lua_sethook(lua, nullptr, 0, 0);
  if (status == 0) {
    ReplyFromLua(lua, -1, resp_, invocation.reply);
  } else {
    ReplyScriptError(lua, invocation.name, invocation.reply);
  }
  host_ = nullptr;
  lua_settop(lua, 0);
  if (status == LUA_ERRMEM) {
    lua_gc(lua, LUA_GCCOLLECT, 0);  // what the script piled up goes now, not at the next steps
    calls_ = 0;
  } else if (++calls_ == kGcPeriod) {
    lua_gc(lua, LUA_GCSTEP, static_cast<int>(kGcPeriod));
    calls_ = 0;
  }
}

bool LuaVm::CheckInterrupt() { return host_ != nullptr && host_->Interrupted(&interrupt_error_); }

size_t LuaVm::MemoryBytes() const { return bytes_; }

// The reply for an error that ended a call: the error table's message, with where the script
// raised it.
void ReplyScriptError(lua_State* lua, std::string_view name, ReplyBuilder* reply) {
  if (!lua_istable(lua, -1)) {
    const char* text = lua_tostring(lua, -1);
    std::string message = "ERR Error running script (call to " + std::string(name) +
                          "): " + (text != nullptr ? text : "unknown error");
    lua_pop(lua, 1);
    reply->Error(message);
    return;
  }
  lua_getfield(lua, -1, "err");
  lua_getfield(lua, -2, "source");
  lua_getfield(lua, -3, "line");
  // An error table without a message (error({})) crashes Redis 7.2; Goblin names it.
  std::string message = lua_isstring(lua, -3) ? lua_tostring(lua, -3) : "ERR unknown error";
  if (lua_isstring(lua, -2) && lua_isstring(lua, -1)) {
    message += " script: " + std::string(name) + ", on " + lua_tostring(lua, -2) + ":" +
               lua_tostring(lua, -1) + ".";
  }
  lua_pop(lua, 4);
  reply->Error(message);
}

// --- Conversions ----------------------------------------------------------------------------

void PushErrorTable(lua_State* lua, std::string_view error) {
  // "-CODE message" keeps its code; a bare message gets ERR (Redis's luaPushErrorBuff).
  std::string_view code = "ERR";
  std::string_view message = error;
  if (!error.empty() && error[0] == '-') {
    size_t space = error.find(' ');
    if (space == std::string_view::npos) {
      message = error.substr(1);
    } else {
      code = error.substr(1, space - 1);
      message = error.substr(space + 1);
    }
  }
  while (!message.empty() && (message.back() == '\r' || message.back() == '\n')) {
    message.remove_suffix(1);
  }
  while (!message.empty() && (message.front() == '\r' || message.front() == '\n')) {
    message.remove_prefix(1);
  }
  lua_createtable(lua, 0, 1);
  lua_pushlstring(lua, code.data(), code.size());
  lua_pushliteral(lua, " ");
  lua_pushlstring(lua, message.data(), message.size());
  lua_concat(lua, 3);
  lua_setfield(lua, -2, "err");
}

namespace {

// One RESP element at data[*pos]: its type byte and the text of its first line.
bool ReadLine(std::string_view data, size_t* pos, char* type, std::string_view* line) {
  if (*pos >= data.size()) return false;
  size_t end = data.find("\r\n", *pos);
  if (end == std::string_view::npos) return false;
  *type = data[*pos];
  *line = data.substr(*pos + 1, end - *pos - 1);
  *pos = end + 2;
  return true;
}

// Replies nest at most this deep before they are refused as unparsable: every level is a C
// frame, and the Lua stack alone (8,000 slots) would let the recursion outgrow a thread's stack.
// No command's reply comes near it.
constexpr int kMaxReplyDepth = 1000;

bool PushElement(lua_State* lua, std::string_view data, size_t* pos, int depth);

bool PushBulkBody(std::string_view data, size_t* pos, int64_t length, std::string_view* body) {
  if (length < 0 || static_cast<size_t>(length) + 2 > data.size() - *pos) return false;
  *body = data.substr(*pos, static_cast<size_t>(length));
  *pos += static_cast<size_t>(length) + 2;
  return true;
}

bool PushAggregate(lua_State* lua, std::string_view data, size_t* pos, char type, int64_t count,
                   int depth) {
  // Maps and sets grow from empty tables, as Redis builds them: a presized table would lay
  // out the same keys in another order, and a script walking it with pairs sees that order.
  if (type == '%') {
    lua_createtable(lua, 0, 1);
    lua_newtable(lua);
    for (int64_t i = 0; i < count; ++i) {
      if (!PushElement(lua, data, pos, depth + 1)) return false;
      if (!PushElement(lua, data, pos, depth + 1)) return false;
      lua_settable(lua, -3);
    }
    lua_setfield(lua, -2, "map");
    return true;
  }
  if (type == '~') {
    lua_createtable(lua, 0, 1);
    lua_newtable(lua);
    for (int64_t i = 0; i < count; ++i) {
      if (!PushElement(lua, data, pos, depth + 1)) return false;
      lua_pushboolean(lua, 1);
      lua_settable(lua, -3);
    }
    lua_setfield(lua, -2, "set");
    return true;
  }
  lua_createtable(lua, static_cast<int>(std::min<int64_t>(count, 1 << 20)), 0);
  for (int64_t i = 0; i < count; ++i) {
    if (!PushElement(lua, data, pos, depth + 1)) return false;
    lua_rawseti(lua, -2, static_cast<int>(i + 1));
  }
  return true;
}

bool PushElement(lua_State* lua, std::string_view data, size_t* pos, int depth) {
  if (depth > kMaxReplyDepth || !lua_checkstack(lua, 4)) return false;
  char type;
  std::string_view line;
  if (!ReadLine(data, pos, &type, &line)) return false;
  int64_t count = 0;
  switch (type) {
    case '+':
      lua_createtable(lua, 0, 1);
      lua_pushlstring(lua, line.data(), line.size());
      lua_setfield(lua, -2, "ok");
      return true;
    case '-': {
      std::string_view error = data.substr(*pos - line.size() - 3, line.size() + 1);
      PushErrorTable(lua, error);
      // The command counted its own error: the script's failure is not counted again.
      lua_pushboolean(lua, 1);
      lua_setfield(lua, -2, "ignore_error_stats_update");
      return true;
    }
    case ':':
      if (!ParseInt64(line, &count)) return false;
      lua_pushnumber(lua, static_cast<lua_Number>(count));
      return true;
    case '$': {
      if (!ParseInt64(line, &count)) return false;
      if (count < 0) {
        lua_pushboolean(lua, 0);
        return true;
      }
      std::string_view body;
      if (!PushBulkBody(data, pos, count, &body)) return false;
      lua_pushlstring(lua, body.data(), body.size());
      return true;
    }
    case '=': {
      std::string_view body;
      if (!ParseInt64(line, &count) || !PushBulkBody(data, pos, count, &body) || body.size() < 4) {
        return false;
      }
      lua_createtable(lua, 0, 1);
      lua_createtable(lua, 0, 2);
      lua_pushlstring(lua, body.data(), 3);
      lua_setfield(lua, -2, "format");
      lua_pushlstring(lua, body.data() + 4, body.size() - 4);
      lua_setfield(lua, -2, "string");
      lua_setfield(lua, -2, "verbatim_string");
      return true;
    }
    case '*':
    case '%':
    case '~':
    case '>':
      if (!ParseInt64(line, &count)) return false;
      if (count < 0) {
        lua_pushboolean(lua, 0);
        return true;
      }
      return PushAggregate(lua, data, pos, type, count, depth);
    case '_':
      lua_pushnil(lua);
      return true;
    case '#':
      lua_pushboolean(lua, line == "t");
      return true;
    case ',': {
      std::string text(line);
      lua_createtable(lua, 0, 1);
      lua_pushnumber(lua, std::strtod(text.c_str(), nullptr));
      lua_setfield(lua, -2, "double");
      return true;
    }
    case '(':
      lua_createtable(lua, 0, 1);
      lua_pushlstring(lua, line.data(), line.size());
      lua_setfield(lua, -2, "big_number");
      return true;
    case '|':
      // Attributes annotate the reply that follows; scripts see only that reply.
      if (!ParseInt64(line, &count)) return false;
      for (int64_t i = 0; i < 2 * count; ++i) {
        if (!PushElement(lua, data, pos, depth + 1)) return false;
        lua_pop(lua, 1);
      }
      return PushElement(lua, data, pos, depth + 1);
    default:
      return false;
  }
}

}  // namespace

size_t PushRespAsLua(lua_State* lua, std::string_view resp) {
  int top = lua_gettop(lua);
  size_t pos = 0;
  if (!PushElement(lua, resp, &pos, 0)) {
    lua_settop(lua, top);
    return 0;
  }
  return pos;
}

namespace {

// Copies a Lua string with CR and LF turned into spaces (status and big-number replies).
std::string OneLine(lua_State* lua, int index) {
  size_t length = 0;
  const char* text = lua_tolstring(lua, index, &length);
  std::string line(text, length);
  for (char& c : line) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return line;
}

// The integer Redis replies for a Lua number: a C cast, which on x86 gives INT64_MIN for
// values out of range and NaN.
int64_t TruncateNumber(lua_Number number) {
  if (!(number >= -9223372036854775808.0 && number < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(number);
}

// Field `name` of the table at index, raw, left on the stack; returns its type.
int RawField(lua_State* lua, int index, const char* name) {
  lua_pushstring(lua, name);
  lua_rawget(lua, index < 0 ? index - 1 : index);
  return lua_type(lua, -1);
}

}  // namespace

void ReplyFromLua(lua_State* lua, int index, int resp, ReplyBuilder* reply) {
  if (index < 0) index = lua_gettop(lua) + index + 1;
  switch (lua_type(lua, index)) {
    case LUA_TSTRING: {
      size_t length = 0;
      const char* text = lua_tolstring(lua, index, &length);
      reply->Bulk(std::string_view(text, length));
      return;
    }
    case LUA_TBOOLEAN:
      if (resp == 2) {
        if (lua_toboolean(lua, index)) {
          reply->Integer(1);
        } else {
          reply->Null();
        }
      } else {
        reply->Bool(lua_toboolean(lua, index));
      }
      return;
    case LUA_TNUMBER:
      reply->Integer(TruncateNumber(lua_tonumber(lua, index)));
      return;
    case LUA_TTABLE:
      break;
    default:
      reply->Null();
      return;
  }
  if (!lua_checkstack(lua, 4)) {
    reply->Error("ERR reached lua stack limit");
    return;
  }
  if (RawField(lua, index, "err") == LUA_TSTRING) {
    lua_pop(lua, 1);
    lua_getfield(lua, index, "err");
    std::string message = lua_tostring(lua, -1);
    lua_pop(lua, 1);
    reply->Error(message);
    return;
  }
  lua_pop(lua, 1);
  if (RawField(lua, index, "ok") == LUA_TSTRING) {
    reply->Simple(OneLine(lua, -1));
    lua_pop(lua, 1);
    return;
  }
  lua_pop(lua, 1);
  if (RawField(lua, index, "double") == LUA_TNUMBER) {
    reply->Double(lua_tonumber(lua, -1));
    lua_pop(lua, 1);
    return;
  }
  lua_pop(lua, 1);
  if (RawField(lua, index, "big_number") == LUA_TSTRING) {
    reply->BigNumber(OneLine(lua, -1));
    lua_pop(lua, 1);
    return;
  }
  lua_pop(lua, 1);
  for (const char* aggregate : {"map", "set"}) {
    if (RawField(lua, index, aggregate) == LUA_TTABLE) {
      const bool map = aggregate[0] == 'm';
      int table = lua_gettop(lua);
      size_t count = 0;
      lua_pushnil(lua);
      while (lua_next(lua, table) != 0) {
        ++count;
        lua_pop(lua, 1);
      }
      if (map) {
        reply->Map(count);
      } else {
        reply->Set(count);
      }
      lua_pushnil(lua);
      while (lua_next(lua, table) != 0) {
        ReplyFromLua(lua, -2, resp, reply);
        if (map) ReplyFromLua(lua, -1, resp, reply);
        lua_pop(lua, 1);
      }
      lua_pop(lua, 1);
      return;
    }
    lua_pop(lua, 1);
  }
  if (RawField(lua, index, "verbatim_string") == LUA_TTABLE) {
    int table = lua_gettop(lua);
    lua_getfield(lua, table, "format");
    lua_getfield(lua, table, "string");
    if (lua_type(lua, -2) == LUA_TSTRING && lua_type(lua, -1) == LUA_TSTRING) {
      size_t format_length = 0;
      size_t text_length = 0;
      const char* format = lua_tolstring(lua, -2, &format_length);
      const char* text = lua_tolstring(lua, -1, &text_length);
      reply->Verbatim(std::string_view(text, text_length), std::string_view(format, format_length));
      lua_pop(lua, 3);
      return;
    }
    lua_pop(lua, 2);
  }
  lua_pop(lua, 1);
  size_t count = 0;
  while (true) {
    lua_rawgeti(lua, index, static_cast<int>(count + 1));
    bool present = !lua_isnil(lua, -1);
    lua_pop(lua, 1);
    if (!present) break;
    ++count;
  }
  reply->Array(count);
  for (size_t i = 1; i <= count; ++i) {
    lua_rawgeti(lua, index, static_cast<int>(i));
    ReplyFromLua(lua, -1, resp, reply);
    lua_pop(lua, 1);
  }
}

}  // namespace goblin
