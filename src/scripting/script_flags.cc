#include "scripting/script_flags.h"

#include <cctype>

#include "core/ascii.h"

namespace goblin {
namespace {

struct FlagName {
  uint32_t flag;
  std::string_view name;
};

constexpr FlagName kFlagNames[] = {
    {kScriptNoWrites, "no-writes"},
    {kScriptAllowOom, "allow-oom"},
    {kScriptAllowStale, "allow-stale"},
    {kScriptNoCluster, "no-cluster"},
    {kScriptAllowCrossSlot, "allow-cross-slot-keys"},
};

// Splits the shebang line (without "#!") into its space-separated words.
std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t start = 0;
  while (start < line.size()) {
    size_t end = line.find(' ', start);
    if (end == std::string_view::npos) end = line.size();
    if (end > start) words.push_back(line.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

}  // namespace

std::vector<std::string_view> ScriptFlagNames(uint32_t flags) {
  std::vector<std::string_view> names;
  for (const FlagName& entry : kFlagNames) {
    if (flags & entry.flag) names.push_back(entry.name);
  }
  return names;
}

uint32_t ScriptFlagByName(std::string_view name) {
  for (const FlagName& entry : kFlagNames) {
    if (entry.name == name) return entry.flag;
  }
  return 0;
}

bool ParseEvalShebang(std::string_view script, uint32_t* flags, size_t* body_offset,
                      std::string* error) {
  *body_offset = 0;
  if (!script.starts_with("#!")) {
    *flags = kScriptCompatMode;
    return true;
  }
  size_t newline = script.find('\n');
  if (newline == std::string_view::npos) {
    *error = "ERR Invalid script shebang";
    return false;
  }
  std::vector<std::string_view> words = Words(script.substr(0, newline));
  if (words.empty() || words[0] != "#!lua") {
    *error = "ERR Unexpected engine in script shebang: " +
             std::string(words.empty() ? std::string_view() : words[0]);
    return false;
  }
  *flags = 0;
  for (size_t i = 1; i < words.size(); ++i) {
    if (!words[i].starts_with("flags=")) {
      *error = "ERR Unknown lua shebang option: " + std::string(words[i]);
      return false;
    }
    std::string_view list = words[i].substr(6);
    size_t start = 0;
    while (start < list.size()) {
      size_t end = list.find(',', start);
      if (end == std::string_view::npos) end = list.size();
      std::string_view name = list.substr(start, end - start);
      uint32_t flag = ScriptFlagByName(name);
      if (flag == 0) {
        *error = "ERR Unexpected flag in script shebang: " + std::string(name);
        return false;
      }
      *flags |= flag;
      start = end + 1;
    }
  }
  *body_offset = newline;
  return true;
}

bool ParseLibraryShebang(std::string_view code, std::string* name, size_t* body_offset,
                         std::string* error) {
  if (!code.starts_with("#!")) {
    *error = "ERR Missing library metadata";
    return false;
  }
  size_t newline = code.find('\n');
  if (newline == std::string_view::npos) {
    *error = "ERR Invalid library metadata";
    return false;
  }
  std::string_view line = code.substr(0, newline);
  // As Redis splits it: the first word is the engine after "#!", so "#! name=x" names the
  // library of engine "".
  std::vector<std::string_view> words = Words(line);
  words[0].remove_prefix(2);
  name->clear();
  bool named = false;
  for (size_t i = 1; i < words.size(); ++i) {
    if (!words[i].starts_with("name=")) {
      *error = "ERR Invalid metadata value given: " + std::string(words[i]);
      return false;
    }
    if (named) {
      *error = "ERR Invalid metadata value, name argument was given multiple times";
      return false;
    }
    *name = std::string(words[i].substr(5));
    named = true;
  }
  if (!named) {
    *error = "ERR Library name was not given";
    return false;
  }
  if (!EqualsIgnoreCase(words[0], "lua")) {
    *error = "ERR Engine '" + std::string(words[0]) + "' not found";
    return false;
  }
  *body_offset = newline;
  return true;
}

bool ValidScriptName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace goblin
