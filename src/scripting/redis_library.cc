// The `redis` library scripts call: redis.call and friends, with Redis's argument checks and
// error texts. Errors raised here are error tables ({err = "ERR ..."}); the VM's error
// handler adds where the script raised them.
#include <cmath>
#include <cstdio>
#include <string>

#include "core/string_number.h"
#include "core/version.h"
#include "scripting/lua_api.h"
#include "scripting/lua_vm.h"
#include "scripting/sha1.h"

namespace goblin {
namespace {

constexpr int kReplNone = 0;
constexpr int kReplAof = 1;
constexpr int kReplReplica = 2;
constexpr int kReplAll = kReplAof | kReplReplica;

// Raises an error table with message (a bare message gets the ERR code).
int RaiseError(lua_State* lua, const char* message) {
  PushErrorTable(lua, message);
  return lua_error(lua);
}

// Converts the call's arguments into vm->call_argv: strings as they are, numbers as "%.17g"
// prints them. Returns false when an argument is neither.
bool CollectArguments(lua_State* lua, LuaVm* vm, int argc) {
  vm->call_numbers.clear();
  for (int i = 1; i <= argc; ++i) {
    int type = lua_type(lua, i);
    if (type == LUA_TNUMBER) {
      const lua_Number number = lua_tonumber(lua, i);
      char text[32];
      size_t length = 0;
      // "%.17g" prints an integer below 1e17 as its digits: the common case, without printf
      // (negative integers too; -0.0 is left to printf, which keeps its sign).
      if (number == std::floor(number) && std::fabs(number) < 1e17 &&
          !(number == 0 && std::signbit(number))) {
        length = FormatInt64(static_cast<int64_t>(number), text);
      } else {
        length = static_cast<size_t>(std::snprintf(text, sizeof(text), "%.17g", number));
      }
      vm->call_numbers.emplace_back(text, length);
    } else if (type != LUA_TSTRING) {
      return false;
    }
  }
  // The views are taken once call_numbers stops growing.
  vm->call_argv.clear();
  size_t number = 0;
  for (int i = 1; i <= argc; ++i) {
    if (lua_type(lua, i) == LUA_TNUMBER) {
      vm->call_argv.emplace_back(vm->call_numbers[number++]);
    } else {
      size_t length = 0;
      const char* text = lua_tolstring(lua, i, &length);
      vm->call_argv.emplace_back(text, length);
    }
  }
  return true;
}

int GenericCall(lua_State* lua, bool raise) {
  LuaVm* vm = VmOf(lua);
  int argc = lua_gettop(lua);
  const char* refusal = nullptr;
  if (argc == 0) {
    refusal = "Please specify at least one argument for this redis lib call";
  } else if (!CollectArguments(lua, vm, argc)) {
    refusal = "Lua redis lib command arguments must be strings or integers";
  } else if (vm->host() == nullptr) {
    refusal = "redis.call can only be used inside a script invocation";
  }
  if (refusal != nullptr) {
    PushErrorTable(lua, refusal);
    return raise ? lua_error(lua) : 1;
  }
  vm->call_reply.clear();
  vm->host()->Call(vm->call_argv, vm->resp(), &vm->call_reply);
  // The arguments are done with: the reply gets the whole stack, however many there were
  // (Redis pops them too since CVE-2021-32626; 7,999 arguments left no room for the reply).
  lua_settop(lua, 0);
  if (PushRespAsLua(lua, vm->call_reply) == 0) {
    PushErrorTable(lua, "Unparsable reply from the server");
  }
  if (raise && !vm->call_reply.empty() && vm->call_reply[0] == '-') return lua_error(lua);
  return 1;
}

int Call(lua_State* lua) { return GenericCall(lua, true); }
int ProtectedCall(lua_State* lua) { return GenericCall(lua, false); }

int ErrorReply(lua_State* lua) {
  if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
    PushErrorTable(lua, "wrong number or type of arguments");
    return 1;
  }
  size_t length = 0;
  const char* text = lua_tolstring(lua, 1, &length);
  if (length > 0 && text[0] == '-') {
    PushErrorTable(lua, std::string_view(text, length));
  } else {
    lua_pushliteral(lua, "-");
    lua_pushvalue(lua, 1);
    lua_concat(lua, 2);
    size_t dashed_length = 0;
    const char* dashed = lua_tolstring(lua, -1, &dashed_length);
    PushErrorTable(lua, std::string_view(dashed, dashed_length));
  }
  return 1;
}

int StatusReply(lua_State* lua) {
  if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
    PushErrorTable(lua, "wrong number or type of arguments");
    return 1;
  }
  lua_createtable(lua, 0, 1);
  lua_pushvalue(lua, 1);
  lua_setfield(lua, -2, "ok");
  return 1;
}

int Sha1HexFunction(lua_State* lua) {
  if (lua_gettop(lua) != 1) return RaiseError(lua, "wrong number of arguments");
  size_t length = 0;
  const char* text = lua_tolstring(lua, 1, &length);
  char hex[41];
  {
    std::string digest = Sha1Hex(std::string_view(text != nullptr ? text : "", length));
    std::snprintf(hex, sizeof(hex), "%s", digest.c_str());
  }
  lua_pushstring(lua, hex);
  return 1;
}

int Log(lua_State* lua) {
  LuaVm* vm = VmOf(lua);
  int argc = lua_gettop(lua);
  if (argc < 2) return RaiseError(lua, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(lua, 1)) return RaiseError(lua, "First argument must be a number (log level).");
  lua_Number level = lua_tonumber(lua, 1);
  if (level < 0 || level > 3) return RaiseError(lua, "Invalid debug level.");
  // Glued with spaces as Redis glues them; arguments that are not strings are skipped.
  lua_pushliteral(lua, "");
  bool first = true;
  for (int i = 2; i <= argc; ++i) {
    if (lua_type(lua, i) != LUA_TSTRING && lua_type(lua, i) != LUA_TNUMBER) continue;
    if (!first) {
      lua_pushliteral(lua, " ");
      lua_concat(lua, 2);
    }
    lua_pushvalue(lua, i);
    lua_concat(lua, 2);
    first = false;
  }
  size_t length = 0;
  const char* message = lua_tolstring(lua, -1, &length);
  if (vm->host() != nullptr) {
    vm->host()->Log(static_cast<int>(level), std::string_view(message, length));
  }
  return 0;
}

int SetResp(lua_State* lua) {
  LuaVm* vm = VmOf(lua);
  if (lua_gettop(lua) != 1) return RaiseError(lua, "redis.setresp() requires one argument.");
  int resp = static_cast<int>(lua_tonumber(lua, 1));
  if (resp != 2 && resp != 3) return RaiseError(lua, "RESP version must be 2 or 3.");
  vm->set_resp(resp);
  return 0;
}

int SetRepl(lua_State* lua) {
  LuaVm* vm = VmOf(lua);
  // Redis's text says two, though the call takes one.
  if (lua_gettop(lua) != 1) return RaiseError(lua, "redis.set_repl() requires two arguments.");
  int flags = static_cast<int>(lua_tonumber(lua, 1));
  if ((flags & ~kReplAll) != 0) {
    return RaiseError(
        lua, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
  }
  if (vm->host() != nullptr) vm->host()->SetReplication(flags);
  return 0;
}

int ReplicateCommands(lua_State* lua) {
  // Redis 7 always replicates a script's effects; the call is kept for old scripts.
  lua_pushboolean(lua, 1);
  return 1;
}

int Breakpoint(lua_State* lua) {
  // Only the script debugger stops here, and Goblin has none.
  lua_pushboolean(lua, 0);
  return 1;
}

int Debug(lua_State*) { return 0; }

int AclCheckCommand(lua_State* lua) {
  LuaVm* vm = VmOf(lua);
  int argc = lua_gettop(lua);
  if (argc == 0) {
    return RaiseError(lua, "Please specify at least one argument for this redis lib call");
  }
  if (!CollectArguments(lua, vm, argc)) {
    return RaiseError(lua, "Lua redis lib command arguments must be strings or integers");
  }
  const std::optional<bool> allowed =
      vm->host() != nullptr ? vm->host()->AclCheck(vm->call_argv) : std::nullopt;
  if (!allowed) return RaiseError(lua, "Invalid command passed to redis.acl_check_cmd()");
  lua_pushboolean(lua, *allowed ? 1 : 0);
  return 1;
}

void SetInteger(lua_State* lua, const char* name, int value) {
  lua_pushinteger(lua, value);
  lua_setfield(lua, -2, name);
}

}  // namespace

void InstallRedisLibrary(LuaVm* vm) {
  lua_State* lua = vm->state();
  lua_newtable(lua);
  SetVmFunction(lua, vm, "call", Call);
  SetVmFunction(lua, vm, "pcall", ProtectedCall);
  SetVmFunction(lua, vm, "error_reply", ErrorReply);
  SetVmFunction(lua, vm, "status_reply", StatusReply);
  SetVmFunction(lua, vm, "sha1hex", Sha1HexFunction);
  SetVmFunction(lua, vm, "setresp", SetResp);
  SetVmFunction(lua, vm, "set_repl", SetRepl);
  // EVAL's own: functions always replicate their effects and have no debugger.
  if (vm->purpose() == LuaVm::Purpose::kEval) {
    SetVmFunction(lua, vm, "replicate_commands", ReplicateCommands);
    SetVmFunction(lua, vm, "breakpoint", Breakpoint);
    SetVmFunction(lua, vm, "debug", Debug);
  }
  SetVmFunction(lua, vm, "acl_check_cmd", AclCheckCommand);
  InstallLogFunctions(vm);
  SetInteger(lua, "REPL_NONE", kReplNone);
  SetInteger(lua, "REPL_AOF", kReplAof);
  SetInteger(lua, "REPL_SLAVE", kReplReplica);
  SetInteger(lua, "REPL_REPLICA", kReplReplica);
  SetInteger(lua, "REPL_ALL", kReplAll);
  lua_setglobal(lua, "redis");
}

void InstallLogFunctions(LuaVm* vm) {
  lua_State* lua = vm->state();
  SetVmFunction(lua, vm, "log", Log);
  SetInteger(lua, "LOG_DEBUG", 0);
  SetInteger(lua, "LOG_VERBOSE", 1);
  SetInteger(lua, "LOG_NOTICE", 2);
  SetInteger(lua, "LOG_WARNING", 3);
  lua_pushstring(lua, kRedisVersion);
  lua_setfield(lua, -2, "REDIS_VERSION");
  lua_pushinteger(lua, kRedisVersionNum);
  lua_setfield(lua, -2, "REDIS_VERSION_NUM");
}

}  // namespace goblin
