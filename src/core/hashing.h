// Seeded 64-bit hashing for every table in Goblin.
//
// The seed is drawn once at process start (see SetHashSeed) so that an attacker cannot
// precompute keys that collide: the same protection Redis gets from siphash with a random key.
#pragma once

#include <cstdint>
#include <string_view>

namespace goblin {

// Sets the process-wide seed. Call once at startup, before any table is built.
void SetHashSeed(uint64_t seed);
uint64_t HashSeed();

// xxh3 of the bytes, keyed by the process seed.
uint64_t HashBytes(std::string_view bytes);

}  // namespace goblin
