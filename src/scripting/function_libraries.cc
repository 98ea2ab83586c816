#include "scripting/function_libraries.h"

#include <algorithm>
#include <chrono>

#include "core/ascii.h"
#include "persist/rdb_format.h"
#include "persist/rdb_string.h"
#include "scripting/lua_api.h"
#include "scripting/script_flags.h"

namespace goblin {

// The library being built while its code runs (redis.register_function adds to it).
struct LibraryLoad {
  FunctionLibrary* library;
  // The function being registered: filled here rather than in a local, because a Lua error
  // unwinds without destructors.
  ScriptFunction pending;
};

namespace {

LibraryLoad* g_load = nullptr;

// Library code runs once, at load, and must finish quickly: nothing else is served meanwhile.
constexpr auto kLoadTimeLimit = std::chrono::milliseconds(500);
constexpr int kLoadHookInstructions = 100000;
std::chrono::steady_clock::time_point g_load_deadline;

void LoadHook(lua_State* lua, lua_Debug*) {
  if (std::chrono::steady_clock::now() < g_load_deadline) return;
  // Every line raises once late, so that a pcall loop cannot go on.
  lua_sethook(lua, LoadHook, LUA_MASKLINE, 0);
  PushErrorTable(lua, "FUNCTION LOAD timeout");
  lua_error(lua);
}

int RegisterError(lua_State* lua, const char* message) {
  PushErrorTable(lua, message);
  return lua_error(lua);
}

// Reads the named-argument form: {function_name=, callback=, flags=, description=}. Leaves
// the callback on top of the stack.
int ReadNamedArguments(lua_State* lua, ScriptFunction* function) {
  bool have_name = false;
  bool have_callback = false;
  lua_pushnil(lua);
  while (lua_next(lua, 1) != 0) {
    if (lua_type(lua, -2) == LUA_TNUMBER) {
      return RegisterError(lua, "unknown argument given to redis.register_function");
    }
    if (lua_type(lua, -2) != LUA_TSTRING) {
      return RegisterError(lua,
                           "named argument key given to redis.register_function is not a string");
    }
    std::string_view key = lua_tostring(lua, -2);
    if (EqualsIgnoreCase(key, "function_name")) {
      if (!lua_isstring(lua, -1)) {
        return RegisterError(
            lua, "function_name argument given to redis.register_function must be a string");
      }
      size_t length = 0;
      const char* name = lua_tolstring(lua, -1, &length);
      function->name.assign(name, length);
      have_name = true;
    } else if (EqualsIgnoreCase(key, "description")) {
      if (!lua_isstring(lua, -1)) {
        return RegisterError(
            lua, "description argument given to redis.register_function must be a string");
      }
      function->description = lua_tostring(lua, -1);
      function->has_description = true;
    } else if (EqualsIgnoreCase(key, "callback")) {
      if (lua_type(lua, -1) != LUA_TFUNCTION) {
        return RegisterError(
            lua, "callback argument given to redis.register_function must be a function");
      }
      lua_pushvalue(lua, -1);
      lua_replace(lua, 2);
      have_callback = true;
    } else if (EqualsIgnoreCase(key, "flags")) {
      if (lua_type(lua, -1) != LUA_TTABLE) {
        return RegisterError(lua,
                             "flags argument to redis.register_function must be a table "
                             "representing function flags");
      }
      for (int i = 1;; ++i) {
        lua_rawgeti(lua, -1, i);
        if (lua_isnil(lua, -1)) {
          lua_pop(lua, 1);
          break;
        }
        uint32_t flag = lua_type(lua, -1) == LUA_TSTRING
                            ? ScriptFlagByName(AsciiLower(lua_tostring(lua, -1)))
                            : 0;
        lua_pop(lua, 1);
        if (flag == 0) return RegisterError(lua, "unknown flag given");
        function->flags |= flag;
      }
    } else {
      return RegisterError(lua, "unknown argument given to redis.register_function");
    }
    lua_pop(lua, 1);
  }
  if (!have_name)
    return RegisterError(lua, "redis.register_function must get a function name argument");
  if (!have_callback)
    return RegisterError(lua, "redis.register_function must get a callback argument");
  return 0;
}

int RegisterFunction(lua_State* lua) {
  if (g_load == nullptr)
    return RegisterError(lua,
                         "redis.register_function can only be called on FUNCTION LOAD command");
  int argc = lua_gettop(lua);
  ScriptFunction* function = &g_load->pending;
  *function = ScriptFunction();
  if (argc == 1) {
    if (lua_type(lua, 1) != LUA_TTABLE) {
      return RegisterError(lua,
                           "calling redis.register_function with a single argument is only "
                           "applicable to Lua table (representing named arguments).");
    }
    lua_settop(lua, 2);  // slot 2 receives the callback
    ReadNamedArguments(lua, function);
  } else if (argc == 2) {
    if (!lua_isstring(lua, 1)) {
      return RegisterError(lua, "first argument to redis.register_function must be a string");
    }
    if (lua_type(lua, 2) != LUA_TFUNCTION) {
      return RegisterError(lua, "second argument to redis.register_function must be a function");
    }
    size_t length = 0;
    const char* name = lua_tolstring(lua, 1, &length);
    function->name.assign(name, length);
  } else {
    return RegisterError(lua, "wrong number of arguments to redis.register_function");
  }
  if (!ValidScriptName(function->name)) {
    // Redis words a bad function name with its library-name rule (functionLibCreateFunction).
    return RegisterError(lua,
                         "Library names can only contain letters, numbers, or underscores(_) and "
                         "must be at least one character long");
  }
  for (const auto& existing : g_load->library->functions) {
    if (existing->name == function->name) {
      return RegisterError(lua, "Function already exists in the library");
    }
  }
  lua_pushvalue(lua, 2);
  function->handle = luaL_ref(lua, LUA_REGISTRYINDEX);
  function->library = g_load->library;
  g_load->library->functions.push_back(std::make_unique<ScriptFunction>(std::move(*function)));
  return 0;
}

}  // namespace

bool FunctionNameLess::operator()(const std::string& a, const std::string& b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return AsciiToLower(x) < AsciiToLower(y);
  });
}

FunctionLibraries::FunctionLibraries() { Flush(); }

FunctionLibraries::~FunctionLibraries() = default;

void FunctionLibraries::Flush() {
  functions_.clear();
  libraries_.clear();
  vm_ = std::make_unique<LuaVm>(LuaVm::Purpose::kFunctions);
  // The loading environment: a lone `redis` with register_function and the logging API, read
  // strictly (any other name is an unknown global).
  lua_State* lua = vm_->state();
  lua_newtable(lua);
  lua_newtable(lua);
  lua_pushcfunction(lua, RegisterFunction);
  lua_setfield(lua, -2, "register_function");
  InstallLogFunctions(vm_.get());
  vm_->StrictTableOnTop();
  lua_setfield(lua, -2, "redis");
  load_env_ref_ = luaL_ref(lua, LUA_REGISTRYINDEX);
}

std::unique_ptr<FunctionLibrary> FunctionLibraries::Build(std::string_view code,
                                                          std::string_view replacing,
                                                          const FunctionsByName& taken,
                                                          std::string* error) {
  std::string engine;
  std::string name;
  size_t body_offset = 0;
  if (!ParseLibraryShebang(code, &engine, &name, &body_offset, error)) return nullptr;
  if (!ValidScriptName(name)) {
    *error =
        "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
        "least one character long";
    return nullptr;
  }
  if (!EqualsIgnoreCase(engine, "lua")) {
    *error = "ERR Engine '" + engine + "' not found";
    return nullptr;
  }
  if (libraries_.count(name) != 0 && name != replacing) {
    *error = "ERR Library '" + name + "' already exists";
    return nullptr;
  }
  auto library = std::make_unique<FunctionLibrary>();
  library->name = name;
  library->code = std::string(code);
  int chunk = 0;
  std::string compile_error;
  if (!vm_->Compile(code.substr(body_offset), &compile_error, &chunk)) {
    *error = "ERR Error compiling function: " + compile_error;
    return nullptr;
  }
  lua_State* lua = vm_->state();
  lua_settop(lua, 0);
  vm_->PushErrorHandler();
  lua_rawgeti(lua, LUA_REGISTRYINDEX, load_env_ref_);
  vm_->SetGlobalsFromStack();
  LibraryLoad load{library.get(), {}};
  g_load = &load;
  lua_rawgeti(lua, LUA_REGISTRYINDEX, chunk);
  g_load_deadline = std::chrono::steady_clock::now() + kLoadTimeLimit;
  lua_sethook(lua, LoadHook, LUA_MASKCOUNT, kLoadHookInstructions);
  int status = lua_pcall(lua, 0, 0, 1);
  lua_sethook(lua, nullptr, 0, 0);
  g_load = nullptr;
  vm_->RestoreGlobals();
  vm_->Release(chunk);
  auto release_all = [&] {
    for (const auto& function : library->functions) vm_->Release(function->handle);
  };
  if (status != 0) {
    std::string message;
    if (lua_istable(lua, -1)) {
      lua_getfield(lua, -1, "err");
      message = lua_isstring(lua, -1) ? lua_tostring(lua, -1) : "ERR unknown error";
    } else {
      message = lua_isstring(lua, -1) ? lua_tostring(lua, -1) : "unknown error";
    }
    lua_settop(lua, 0);
    release_all();
    *error = "ERR Error registering functions: " + message;
    return nullptr;
  }
  lua_settop(lua, 0);
  if (library->functions.empty()) {
    *error = "ERR No functions registered";
    return nullptr;
  }
  for (const auto& function : library->functions) {
    auto it = taken.find(function->name);
    if (it != taken.end() && it->second->library->name != replacing) {
      *error = "ERR Function " + function->name + " already exists";
      release_all();
      return nullptr;
    }
  }
  return library;
}

void FunctionLibraries::Add(std::unique_ptr<FunctionLibrary> library) {
  for (const auto& function : library->functions) functions_[function->name] = function.get();
  std::string name = library->name;
  libraries_[name] = std::move(library);
}

void FunctionLibraries::Remove(std::string_view name) {
  auto it = libraries_.find(name);
  if (it == libraries_.end()) return;
  for (const auto& function : it->second->functions) {
    functions_.erase(function->name);
    vm_->Release(function->handle);
  }
  libraries_.erase(it);
}

bool FunctionLibraries::Load(std::string_view code, bool replace, std::string* name,
                             std::string* error) {
  std::string engine;
  std::string parsed_name;
  size_t offset = 0;
  std::string ignored;
  std::string_view replacing;
  if (replace && ParseLibraryShebang(code, &engine, &parsed_name, &offset, &ignored)) {
    replacing = parsed_name;
  }
  std::unique_ptr<FunctionLibrary> library = Build(code, replacing, functions_, error);
  if (library == nullptr) return false;
  *name = library->name;
  Remove(library->name);
  Add(std::move(library));
  return true;
}

bool FunctionLibraries::Delete(std::string_view name) {
  if (libraries_.find(name) == libraries_.end()) return false;
  Remove(name);
  return true;
}

const ScriptFunction* FunctionLibraries::FindFunction(std::string_view name) const {
  auto it = functions_.find(std::string(name));
  return it == functions_.end() ? nullptr : it->second;
}

const FunctionLibrary* FunctionLibraries::FindLibrary(std::string_view name) const {
  auto it = libraries_.find(name);
  return it == libraries_.end() ? nullptr : it->second.get();
}

std::vector<std::string_view> FunctionLibraries::Codes() const {
  std::vector<std::string_view> codes;
  for (const auto& [name, library] : libraries_) codes.push_back(library->code);
  return codes;
}

std::string FunctionLibraries::Dump() const {
  std::string payload;
  for (const auto& [name, library] : libraries_) {
    RdbAppendFunction(&payload, library->code, /*compress=*/false);
  }
  RdbAppendPayloadTrailer(&payload);
  return payload;
}

bool FunctionLibraries::Restore(std::string_view payload, RestorePolicy policy,
                                std::string* error) {
  std::string_view body;
  if (!RdbCheckPayload(payload, &body)) {
    *error = "ERR DUMP payload version or checksum are wrong";
    return false;
  }
  std::vector<std::string> codes;
  size_t pos = 0;
  while (pos < body.size()) {
    uint8_t opcode = static_cast<uint8_t>(body[pos++]);
    if (opcode == rdb::kOpFunctionPreGa) {
      *error = "ERR Pre-GA function format not supported";
      return false;
    }
    if (opcode != rdb::kOpFunction2) {
      *error = "ERR given type is not a function";
      return false;
    }
    std::string code;
    if (!RdbReadString(body, &pos, &code)) {
      *error = "ERR can not read data from given payload";
      return false;
    }
    codes.push_back(std::move(code));
  }
  // Build everything first: a failure leaves the current libraries as they are.
  FunctionsByName taken;
  if (policy != RestorePolicy::kFlush) taken = functions_;
  std::vector<std::unique_ptr<FunctionLibrary>> built;
  FunctionsByName incoming;
  auto fail = [&](const std::string& message) {
    for (const auto& library : built) {
      for (const auto& function : library->functions) vm_->Release(function->handle);
    }
    *error = message;
    return false;
  };
  for (const std::string& code : codes) {
    std::string engine;
    std::string name;
    size_t offset = 0;
    std::string parse_error;
    std::string_view replacing;
    if (ParseLibraryShebang(code, &engine, &name, &offset, &parse_error) &&
        (policy == RestorePolicy::kFlush ||
         (policy == RestorePolicy::kReplace && libraries_.count(name) != 0))) {
      replacing = name;
    }
    for (const auto& library : built) {
      if (library->name == name) return fail("ERR Library " + name + " already exists");
    }
    if (policy == RestorePolicy::kAppend && libraries_.count(name) != 0) {
      return fail("ERR Library " + name + " already exists");
    }
    std::string build_error;
    std::unique_ptr<FunctionLibrary> library = Build(code, replacing, taken, &build_error);
    if (library == nullptr) return fail(build_error);
    built.push_back(std::move(library));
    for (const auto& function : built.back()->functions) {
      if (incoming.count(function->name) != 0) {
        return fail("ERR Function " + function->name + " already exists");
      }
      incoming[function->name] = function.get();
    }
  }
  if (policy == RestorePolicy::kFlush) {
    std::vector<std::string> names;
    for (const auto& [name, library] : libraries_) names.push_back(name);
    for (const std::string& name : names) Remove(name);
  }
  for (auto& library : built) {
    Remove(library->name);
    Add(std::move(library));
  }
  return true;
}

size_t FunctionLibraries::LibraryBytes() const {
  size_t bytes = 0;
  for (const auto& [name, library] : libraries_) {
    bytes += sizeof(FunctionLibrary) + name.size() + library->code.size();
    for (const auto& function : library->functions) {
      bytes += sizeof(ScriptFunction) + function->name.size() + function->description.size();
    }
  }
  return bytes;
}

}  // namespace goblin
