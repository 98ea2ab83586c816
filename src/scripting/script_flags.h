// Script flags: what a script declares about itself, on its shebang line (EVAL) or when it
// registers a function (FUNCTION LOAD), and the checks the server makes from them.
//
//   #!lua flags=no-writes,allow-oom      (EVAL: the first line; the body follows it)
//   #!lua name=mylib                     (FUNCTION LOAD: the library's metadata)
//
// A script without a shebang runs in the compatibility mode of Redis 6 scripts: it may write,
// and a maxmemory refusal comes from its first write instead of before it runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace goblin {

enum ScriptFlag : uint32_t {
  kScriptNoWrites = 1 << 0,
  kScriptAllowOom = 1 << 1,
  kScriptAllowStale = 1 << 2,
  kScriptNoCluster = 1 << 3,
  kScriptAllowCrossSlot = 1 << 4,
  kScriptCompatMode = 1 << 5,  // an EVAL script without a shebang line
};

// The flag names, in the order FUNCTION LIST reports them.
std::vector<std::string_view> ScriptFlagNames(uint32_t flags);
// One flag by name (0 when unknown).
uint32_t ScriptFlagByName(std::string_view name);

// Reads the shebang of an EVAL script. On success *flags holds the script's flags and
// *body_offset where the Lua code starts (the newline ending the shebang stays, so line
// numbers count from the shebang); on failure *error is Redis's reply text.
bool ParseEvalShebang(std::string_view script, uint32_t* flags, size_t* body_offset,
                      std::string* error);

// Reads the metadata line of a function library: *engine is the word after "#!" (the caller
// checks it after the name, in Redis's order), name= is required.
bool ParseLibraryShebang(std::string_view code, std::string* engine, std::string* name,
                         size_t* body_offset, std::string* error);

// Library and function names: letters, digits and underscores, at least one.
bool ValidScriptName(std::string_view name);

}  // namespace goblin
