// The digest of a string value that DIGEST replies and that SET's and DELEX's IFDEQ / IFDNE
// compare against: XXH3-64 with seed 0 over the value's bytes (an integer-encoded value hashes
// its decimal text), written as 16 lower-case hex digits, most significant first.
//
// Unlike HashBytes (core/hashing.h) it is not keyed by the process seed: a client computes the
// same digest itself, and a digest read from one server must match on another.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

inline constexpr size_t kStringDigestHexLength = 16;

// XXH3-64 (seed 0) of the bytes.
uint64_t StringDigest(std::string_view bytes);

// StringDigest as 16 lower-case hex digits, zero-padded.
std::string StringDigestHex(std::string_view bytes);

// Whether text names the digest of bytes: the hex digits compared without regard to case.
bool DigestMatches(std::string_view bytes, std::string_view text);

}  // namespace goblin
