// BITOP's operations over byte strings (Redis's bitopCommand, bitops.c). Pure functions over
// caller-owned bytes: no key, no reply.
//
// Every source reads as if zero-padded to the longest one, and the result has that length. With
// X the first source and Y the others, a result bit is set when:
//
//   AND    it is set in every source            DIFF   set in X and in none of Y
//   OR     it is set in at least one source     DIFF1  set in at least one of Y, not in X
//   XOR    it is set in an odd number of them   ANDOR  set in X and in at least one of Y
//   NOT    it is clear in X (one source only)   ONE    set in exactly one source
//
// DIFF, DIFF1 and ANDOR need at least two sources (the command refuses fewer), NOT exactly one.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace goblin::bitop {

enum class Op { kAnd, kOr, kXor, kNot, kDiff, kDiff1, kAndOr, kOne };

// The operation a BITOP argument names, case-insensitively; nullopt for any other word.
std::optional<Op> ParseOp(std::string_view name);

// Whether op takes a first source apart from the others (DIFF, DIFF1, ANDOR).
bool NeedsTwoSources(Op op);

// The result of op over the sources. REQUIRES: sources is non-empty, exactly one for kNot, at
// least two where NeedsTwoSources(op).
std::string Apply(Op op, std::span<const std::string_view> sources);

}  // namespace goblin::bitop
