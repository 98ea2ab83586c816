// Glob-style matching with the rules of Redis's stringmatchlen (KEYS, SCAN MATCH, CONFIG GET,
// PSUBSCRIBE, ...), on binary strings:
//  1. `*` any run, `?` one byte, `\x` a literal x (a trailing `\` is a literal backslash).
//  2. `[abc]`, `[^abc]`, `[a-z]`; a reversed range `[z-a]` is the same as `[a-z]`; `[a-]` is
//     the range a..']' (Redis reads `-]` as a range end); an unterminated class takes the rest
//     of the pattern; inside a class `\x` is x, compared exactly even with nocase.
//  3. Bytes compare as signed chars (as on x86-64), so a range bound >= 0x80 is negative:
//     `[a-\xff]` holds 0xff and 0x00..'a' but not 0x80..0xfe.
//  4. nocase folds ASCII letters only; a range folds its bounds after ordering them, so
//     `[Z-a]` with nocase matches nothing.
//  5. An empty text matches only an empty pattern (even `*` does not match it).
// Time is O(pattern x text) at worst: no exponential blow-up on "*a*a*a*a*b".
#pragma once

#include <string_view>

namespace goblin {

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase = false);

}  // namespace goblin
