// MurmurHash64A (Austin Appleby's MurmurHash2, 64-bit variant), the hash Redis's HyperLogLog
// uses to place an element. Bytes are read as little-endian words on every host, so a value's
// registers are the same wherever it was built; that is what lets a HyperLogLog string move
// between Goblin and Redis byte for byte (core/hyperloglog.h).
//
// Not for tables: it has no per-process seed (core/hashing.h has the one tables use).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace goblin {

uint64_t MurmurHash64A(std::string_view bytes, uint64_t seed);

}  // namespace goblin
