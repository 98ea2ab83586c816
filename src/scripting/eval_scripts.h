// The script cache of EVAL, EVALSHA and SCRIPT LOAD: scripts by the SHA1 of their text,
// compiled once into their own Lua interpreter. As in Redis 7 the cache is not persisted and
// SCRIPT FLUSH drops it with the interpreter.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "scripting/lua_vm.h"

namespace goblin {

struct EvalScript {
  std::string sha;     // its name: the SHA1 of its text, in lower case
  int handle = 0;      // the compiled function in the interpreter's registry
  uint32_t flags = 0;  // ScriptFlag bits from its shebang (kScriptCompatMode without one)
  size_t bytes = 0;    // the script's text
};

class EvalScripts {
 public:
  EvalScripts();

  // Compiles script unless cached; *sha is its name. Returns nullptr with *error set (Redis's
  // reply text) when the shebang is invalid or the code does not compile.
  const EvalScript* Add(std::string_view script, std::string* sha, std::string* error);
  // sha is matched in any case, as Redis matches it.
  const EvalScript* Find(std::string_view sha) const;
  // SCRIPT FLUSH: forgets every script and starts a new interpreter.
  void Flush();

  LuaVm& vm() { return *vm_; }
  size_t size() const { return scripts_.size(); }
  // used_memory_scripts_eval: the cache's own bytes (texts and entries).
  size_t CacheBytes() const;

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  std::unique_ptr<LuaVm> vm_;
  std::unordered_map<std::string, EvalScript, NameHash, std::equal_to<>> scripts_;
  size_t text_bytes_ = 0;
};

}  // namespace goblin
