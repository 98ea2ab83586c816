#include "core/murmur_hash.h"

#include <bit>
#include <cstring>

namespace goblin {

uint64_t MurmurHash64A(std::string_view bytes, uint64_t seed) {
  constexpr uint64_t kMultiplier = 0xc6a4a7935bd1e995ULL;
  constexpr int kShift = 47;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t length = bytes.size();
  uint64_t h = seed ^ (length * kMultiplier);

  const size_t whole_words = length / 8;
  for (size_t i = 0; i < whole_words; ++i) {
    uint64_t k;
    std::memcpy(&k, data + i * 8, 8);
    if constexpr (std::endian::native == std::endian::big) k = __builtin_bswap64(k);
    k *= kMultiplier;
    k ^= k >> kShift;
    k *= kMultiplier;
    h ^= k;
    h *= kMultiplier;
  }

  // The last length % 8 bytes, the first of them lowest.
  const uint8_t* tail = data + whole_words * 8;
  const size_t rest = length & 7;
  if (rest != 0) {
    for (size_t b = rest; b-- > 0;) h ^= static_cast<uint64_t>(tail[b]) << (8 * b);
    h *= kMultiplier;
  }

  h ^= h >> kShift;
  h *= kMultiplier;
  h ^= h >> kShift;
  return h;
}

}  // namespace goblin
