#include "core/value_digest.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace goblin {

void ValueDigest::Mix(std::string_view bytes) {
  std::string material(reinterpret_cast<const char*>(state_), kBytes);
  const uint64_t length = bytes.size();
  material.append(reinterpret_cast<const char*>(&length), sizeof(length));
  material.append(bytes);
  // Two seeded 128-bit passes give the 20 bytes.
  const XXH128_hash_t a = XXH3_128bits_withSeed(material.data(), material.size(), 1);
  const XXH128_hash_t b = XXH3_128bits_withSeed(material.data(), material.size(), 2);
  std::memcpy(state_, &a, 16);
  std::memcpy(state_ + 16, &b, kBytes - 16);
}

void ValueDigest::Mix(int64_t value) {
  Mix(std::string_view(reinterpret_cast<const char*>(&value), sizeof(value)));
}

void ValueDigest::Mix(double value) {
  Mix(std::string_view(reinterpret_cast<const char*>(&value), sizeof(value)));
}

void ValueDigest::Mix(const ValueDigest& part) {
  Mix(std::string_view(reinterpret_cast<const char*>(part.state_), kBytes));
}

void ValueDigest::Xor(const ValueDigest& other) {
  for (size_t i = 0; i < kBytes; ++i) state_[i] ^= other.state_[i];
}

bool ValueDigest::zero() const {
  return std::all_of(state_, state_ + kBytes, [](uint8_t byte) { return byte == 0; });
}

std::string ValueDigest::Hex() const {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * kBytes);
  for (uint8_t byte : state_) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

}  // namespace goblin
