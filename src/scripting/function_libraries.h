// Function libraries (FUNCTION LOAD, FCALL): Lua code that registers named functions with
// redis.register_function. All libraries share one interpreter, apart from the one EVAL
// scripts run in. Libraries are data: they are logged in the effects stream, kept in
// snapshots and moved with FUNCTION DUMP / RESTORE.
//
// Loading runs the library's code once in a restricted environment whose only global is a
// `redis` holding register_function, log and the constants; the functions it registers run
// later with the full `redis` library, as on Redis.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scripting/lua_vm.h"

namespace goblin {

struct FunctionLibrary;

struct ScriptFunction {
  std::string name;
  std::string description;  // empty when not given
  bool has_description = false;
  uint32_t flags = 0;  // ScriptFlag bits
  int handle = 0;      // the callback in the interpreter's registry
  const FunctionLibrary* library = nullptr;
};

struct FunctionLibrary {
  std::string name;
  std::string code;
  std::vector<std::unique_ptr<ScriptFunction>> functions;  // in registration order
};

// Function names are one namespace across libraries, compared without case as Redis does
// (FCALL TEST finds test); library names keep their case.
struct FunctionNameLess {
  bool operator()(const std::string& a, const std::string& b) const;
};
using FunctionsByName = std::map<std::string, ScriptFunction*, FunctionNameLess>;

class FunctionLibraries {
 public:
  FunctionLibraries();
  ~FunctionLibraries();

  // FUNCTION LOAD: compiles and runs code, then adds its library (replacing the one with its
  // name when replace). Returns false with *error (Redis's reply text); *name is the
  // library's name.
  bool Load(std::string_view code, bool replace, std::string* name, std::string* error);
  // FUNCTION DELETE: false when there is no such library.
  bool Delete(std::string_view name);
  // FUNCTION FLUSH: no libraries, a new interpreter.
  void Flush();

  const ScriptFunction* FindFunction(std::string_view name) const;
  const FunctionLibrary* FindLibrary(std::string_view name) const;
  // Libraries by name.
  const std::map<std::string, std::unique_ptr<FunctionLibrary>, std::less<>>& libraries() const {
    return libraries_;
  }
  size_t function_count() const { return functions_.size(); }

  // FUNCTION DUMP: Redis's payload (each library as an RDB function record, then the RDB
  // version and a CRC64), readable by Redis 7's FUNCTION RESTORE.
  std::string Dump() const;
  enum class RestorePolicy { kAppend, kReplace, kFlush };
  // FUNCTION RESTORE. Nothing changes unless every library in payload loads.
  bool Restore(std::string_view payload, RestorePolicy policy, std::string* error);
  // Every library's code, in name order (what snapshots and the effects stream carry).
  std::vector<std::string_view> Codes() const;

  LuaVm& vm() { return *vm_; }
  // used_memory_functions: the libraries' own bytes.
  size_t LibraryBytes() const;

 private:
  friend struct LibraryLoad;
  // Compiles and runs code into a new library without adding it; checks names against the
  // libraries that stay (all but the one named replacing).
  std::unique_ptr<FunctionLibrary> Build(std::string_view code, std::string_view replacing,
                                         const FunctionsByName& taken, std::string* error);
  void Add(std::unique_ptr<FunctionLibrary> library);
  void Remove(std::string_view name);

  std::unique_ptr<LuaVm> vm_;
  std::map<std::string, std::unique_ptr<FunctionLibrary>, std::less<>> libraries_;
  FunctionsByName functions_;
  int load_env_ref_ = 0;  // the environment library code runs in while it loads
};

}  // namespace goblin
