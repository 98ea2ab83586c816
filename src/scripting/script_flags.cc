#include "scripting/script_flags.h"

#include <cctype>

#include "core/ascii.h"
#include "resp/request_parser.h"

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

// Splits the shebang line into its words as Redis does (sdssplitargs: blanks separate them,
// quotes group and escape), so `name="lib"` names the library lib. False on unbalanced quotes.
bool Words(std::string_view line, std::vector<std::string>* words) {
  return SplitInlineArgs(line, words) && !words->empty();
}

// The comma-separated flags of `flags=`: none when the list is empty, and an empty name
// wherever two commas meet or one ends the list (an unknown flag, as on Redis).
std::vector<std::string_view> FlagList(std::string_view list) {
  std::vector<std::string_view> names;
  if (list.empty()) return names;
  size_t start = 0;
  while (true) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) {
      names.push_back(list.substr(start));
      return names;
    }
    names.push_back(list.substr(start, end - start));
    start = end + 1;
  }
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
  std::vector<std::string> words;
  if (!Words(script.substr(0, newline), &words)) {
    *error = "ERR Invalid engine in script shebang";
    return false;
  }
  if (words[0] != "#!lua") {
    *error = "ERR Unexpected engine in script shebang: " + words[0];
    return false;
  }
  *flags = 0;
  for (size_t i = 1; i < words.size(); ++i) {
    std::string_view word = words[i];
    if (!word.starts_with("flags=")) {
      *error = "ERR Unknown lua shebang option: " + words[i];
      return false;
    }
    for (std::string_view name : FlagList(word.substr(6))) {
      uint32_t flag = ScriptFlagByName(name);
      if (flag == 0) {
        *error = "ERR Unexpected flag in script shebang: " + std::string(name);
        return false;
      }
      *flags |= flag;
    }
  }
  *body_offset = newline;
  return true;
}

bool ParseLibraryShebang(std::string_view code, std::string* engine, std::string* name,
                         size_t* body_offset, std::string* error) {
  if (!code.starts_with("#!")) {
    *error = "ERR Missing library metadata";
    return false;
  }
  size_t newline = code.find('\n');
  std::vector<std::string> words;
  if (newline == std::string_view::npos || !Words(code.substr(0, newline), &words)) {
    *error = "ERR Invalid library metadata";
    return false;
  }
  // As Redis reads it: the engine is the first word after "#!", so "#! name=x" names the
  // library of engine "".
  *engine = words[0].size() < 2 ? std::string() : words[0].substr(2);
  name->clear();
  bool named = false;
  for (size_t i = 1; i < words.size(); ++i) {
    if (!EqualsIgnoreCase(std::string_view(words[i]).substr(0, 5), "name=")) {
      *error = "ERR Invalid metadata value given: " + words[i];
      return false;
    }
    if (named) {
      *error = "ERR Invalid metadata value, name argument was given multiple times";
      return false;
    }
    *name = words[i].substr(5);
    named = true;
  }
  if (!named) {
    *error = "ERR Library name was not given";
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
