#include "core/string_digest.h"

#include <xxhash.h>

#include "core/ascii.h"

namespace goblin {

uint64_t StringDigest(std::string_view bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }

std::string StringDigestHex(std::string_view bytes) {
  const uint64_t digest = StringDigest(bytes);
  char big_endian[8];
  for (int i = 0; i < 8; ++i) big_endian[i] = static_cast<char>(digest >> (56 - 8 * i));
  return LowerHex(std::string_view(big_endian, sizeof(big_endian)));
}

bool DigestMatches(std::string_view bytes, std::string_view text) {
  return EqualsIgnoreCase(StringDigestHex(bytes), text);
}

}  // namespace goblin
