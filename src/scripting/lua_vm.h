// One sandboxed Lua 5.1 interpreter, set up as Redis sets up the one it runs scripts in.
//
// The sandbox:
//  1. The libraries are base (without dofile, loadfile, print, require and the module
//     system), table, string, math, coroutine, cjson, bit, cmsgpack and struct, plus the
//     `redis` library. No io, os, debug or package.
//  2. Globals are read-only. The table scripts see as their globals is an empty proxy: reading
//     a name looks it up in the backing table (an unknown name is an error), writing one is an
//     error ("Attempt to modify a readonly table"). The library tables are proxies the same
//     way, and so is the metatable all strings share. The backing table can be switched
//     (FUNCTION LOAD runs library code against a table whose `redis` holds only
//     register_function and the logging API). getmetatable answers for the proxies as Redis's
//     read-only flag would: nil for a library table, and for the globals a read-only table
//     whose __index raises the nonexistent-global error.
//  3. Chunks are source text: the interpreter (deps/lua) never loads bytecode, and each EVAL
//     body is compiled alone and kept in the registry, never in the globals.
//  4. math.random and math.randomseed use rand48 and are reseeded with 0 before every call,
//     so a script draws the same sequence every time it runs, as on Redis.
//
// Errors follow Redis's shape: an error is a table {err = "CODE message"} that may carry the
// script source and line it was raised at; the reply to the caller is "-CODE message script:
// <name>, on @user_script:<line>." for a raised error and "-CODE message" for a returned one.
//
// Lua reports errors with longjmp (Lua is C): no function here holds an object with a
// destructor across a Lua call that can raise.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct lua_State;

namespace goblin {

class ReplyBuilder;

// What a running script reaches through the `redis` library.
class ScriptHost {
 public:
  virtual ~ScriptHost() = default;
  // redis.call / redis.pcall: runs argv and appends its reply, in RESP version resp, to
  // *reply: the command's own reply, or an error reply when the script may not run it.
  virtual void Call(std::span<const std::string_view> argv, int resp, std::string* reply) = 0;
  // redis.log; level 0 (LOG_DEBUG) to 3 (LOG_WARNING).
  virtual void Log(int level, std::string_view message) = 0;
  // Asked every few thousand VM instructions. Returns true, with the error to end the script
  // with, when the script must stop (SCRIPT KILL); serves other clients meanwhile when the
  // script has run past busy-reply-threshold.
  virtual bool Interrupted(std::string* error) = 0;
  // redis.acl_check_cmd: whether the script's user may run argv; nullopt when argv names no
  // command.
  virtual std::optional<bool> AclCheck(std::span<const std::string_view> argv) = 0;
  // redis.set_repl: where the script's next writes are propagated (REPL_* bits: 1 the
  // append-only file, 2 replicas).
  virtual void SetReplication(int flags) = 0;
};

class LuaVm {
 public:
  // Scripts sent with EVAL, or function libraries (their chunks are named user_function).
  enum class Purpose { kEval, kFunctions };

  explicit LuaVm(Purpose purpose);
  ~LuaVm();
  LuaVm(const LuaVm&) = delete;
  LuaVm& operator=(const LuaVm&) = delete;

  lua_State* state() { return lua_; }
  Purpose purpose() const { return purpose_; }

  // Compiles body; on success the function stays in the registry under *handle. On failure
  // *error is Lua's message ("user_script:1: unexpected symbol near '<eof>'").
  bool Compile(std::string_view body, std::string* error, int* handle);
  void Release(int handle);
  // Pushes the error handler calls run under (Redis's __redis__err__handler).
  void PushErrorHandler();

  struct Invocation {
    int handle = 0;
    std::span<const std::string_view> keys;
    std::span<const std::string_view> args;
    // EVAL scripts read KEYS and ARGV as globals; functions get them as their two arguments.
    bool keys_as_globals = true;
    std::string_view name;  // shown in error replies: the script's SHA1 or the function name
    ScriptHost* host = nullptr;
    ReplyBuilder* reply = nullptr;
    // While it runs the interpreter may not grow past this many bytes (0: no limit); an
    // allocation beyond it fails and the script gets Lua's "not enough memory".
    size_t memory_limit = 0;
  };
  // Runs one call and appends its reply (or error reply) to invocation.reply.
  void Run(const Invocation& invocation);

  // The table global names resolve in: the usual globals, or a library-loading table pushed
  // by the caller (REQUIRES: a table on top of the stack; it is popped). RestoreGlobals
  // switches back.
  void SetGlobalsFromStack();
  void RestoreGlobals();
  // Makes the table on top of the stack read-only: it is replaced by a proxy.
  void ProtectTableOnTop();
  // The same, and reading a field the table lacks is an error, as for a global.
  void StrictTableOnTop();

  // Bytes the interpreter holds (used_memory_lua and friends).
  size_t MemoryBytes() const;

  // The running call's state, read by the `redis` library functions.
  ScriptHost* host() const { return host_; }
  int resp() const { return resp_; }
  void set_resp(int resp) { resp_ = resp; }
  // Asks the host whether the running script must stop; interrupt_error() then says why.
  bool CheckInterrupt();
  const std::string& interrupt_error() const { return interrupt_error_; }
  // Scratch space of redis.call, kept here because a Lua error unwinds without destructors.
  std::vector<std::string_view> call_argv;
  std::vector<std::string> call_numbers;
  std::string call_reply;

 private:
  void OpenLibraries();
  void InstallGlobalsProxy();
  void ProtectStringMetatable();
  int current_globals_slot();

  static void* Allocate(void* self, void* block, size_t old_size, size_t new_size);

  // Declared before lua_: the allocator counts from the first allocation of lua_newstate.
  size_t bytes_ = 0;
  size_t memory_limit_ = 0;
  lua_State* lua_;
  Purpose purpose_;
  int globals_ref_ = 0;  // the usual backing table
  int slot_ref_ = 0;     // registry slot holding the backing table names resolve in now
  ScriptHost* host_ = nullptr;
  int resp_ = 2;
  uint32_t calls_ = 0;
  std::string interrupt_error_;
};

// Appends the error reply for the error value on top of the stack (popped) that ended the call
// of the script or function called name.
void ReplyScriptError(lua_State* lua, std::string_view name, ReplyBuilder* reply);

// Pushes the Lua value of a RESP reply (Redis's conversion: status → {ok=}, error →
// {err=}, null bulk → false, RESP3 maps → {map={}}, ...). Returns the bytes consumed, or 0
// for a malformed reply (nothing pushed).
size_t PushRespAsLua(lua_State* lua, std::string_view resp);

// Appends the reply for the Lua value at index (Redis's conversion: numbers truncated to
// integers, arrays stop at the first nil, {err=}, {ok=}, {double=}, {map=}, ...). resp is the
// version the script chose with redis.setresp: under 2, booleans are 1 and null.
void ReplyFromLua(lua_State* lua, int index, int resp, ReplyBuilder* reply);

// Pushes the error table Redis builds from an error reply's text ("-CODE message" or a bare
// message, which gets the ERR code).
void PushErrorTable(lua_State* lua, std::string_view error);

}  // namespace goblin
