#include "core/crc64.h"

#include <array>

namespace goblin {
namespace {

constexpr uint64_t kJonesReflected = 0x95ac9329ac4bc9b5ULL;

// Eight tables: the data is consumed a 64-bit word at a time ("slicing by 8").
using Tables = std::array<std::array<uint64_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables tables{};
  for (uint64_t byte = 0; byte < 256; ++byte) {
    uint64_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kJonesReflected : crc >> 1;
    tables[0][byte] = crc;
  }
  for (size_t byte = 0; byte < 256; ++byte) {
    for (size_t k = 1; k < 8; ++k) {
      uint64_t previous = tables[k - 1][byte];
      tables[k][byte] = tables[0][previous & 0xff] ^ (previous >> 8);
    }
  }
  return tables;
}

constexpr Tables kTables = MakeTables();

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint64_t word = 0;
    for (int i = 7; i >= 0; --i) word = word << 8 | p[i];
    crc ^= word;
    crc = kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^ kTables[5][(crc >> 16) & 0xff] ^
          kTables[4][(crc >> 24) & 0xff] ^ kTables[3][(crc >> 32) & 0xff] ^
          kTables[2][(crc >> 40) & 0xff] ^ kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace goblin
