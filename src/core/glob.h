// Glob-style matching with Redis's rules (KEYS, SCAN MATCH, CONFIG GET, ...):
// `*` any run, `?` one byte, `[abc]`, `[^a-z]`, `\x` a literal x. Works on binary strings.
#pragma once

#include <string_view>

namespace goblin {

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase = false);

}  // namespace goblin
