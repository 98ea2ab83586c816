#include "core/hashing.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace goblin {
namespace {
uint64_t g_hash_seed = 0x9e3779b97f4a7c15ULL;
}  // namespace

void SetHashSeed(uint64_t seed) { g_hash_seed = seed; }
uint64_t HashSeed() { return g_hash_seed; }

uint64_t HashBytes(std::string_view bytes) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), g_hash_seed);
}

}  // namespace goblin
