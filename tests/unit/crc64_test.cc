// CRC-64 (core/crc64.h) against a bit-at-a-time reference: every length up to a few blocks past
// the folding paths' thresholds, unaligned starts, nonzero starting values, and a CRC continued
// over pieces, which must equal the CRC of the whole.

#include "core/crc64.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace goblin {
namespace {

uint64_t Reference(uint64_t crc, std::string_view data) {
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 1) ? (crc >> 1) ^ 0x95ac9329ac4bc9b5ULL : crc >> 1;
  }
  return crc;
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Crc64, RedisCheckValue) { EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL); }

TEST(Crc64, EveryLengthAndOffsetMatchesTheBitwiseReference) {
  std::mt19937_64 rng(20261202);
  const std::string data = RandomBytes(rng, 700);
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t n = 0; offset + n <= 600; ++n) {
      const std::string_view piece = std::string_view(data).substr(offset, n);
      const uint64_t start = n % 3 == 0 ? 0 : rng();
      ASSERT_EQ(Crc64(start, piece), Reference(start, piece)) << "offset " << offset << " n " << n;
    }
  }
}

TEST(Crc64, LargeInputsAndContinuedPiecesAgree) {
  std::mt19937_64 rng(7);
  for (size_t n : {size_t{4096}, size_t{65537}, size_t{1} << 20}) {
    const std::string data = RandomBytes(rng, n);
    const uint64_t whole = Crc64(0, data);
    EXPECT_EQ(whole, Reference(0, data)) << n;
    uint64_t pieces = 0;
    for (size_t at = 0; at < n;) {
      const size_t take = std::min<size_t>(n - at, rng() % 300);
      pieces = Crc64(pieces, std::string_view(data).substr(at, take));
      at += take;
    }
    EXPECT_EQ(pieces, whole) << n;
  }
  EXPECT_EQ(Crc64(0, std::string(1000, '\0')), Reference(0, std::string(1000, '\0')));
  EXPECT_EQ(Crc64(0, std::string(1000, '\xff')), Reference(0, std::string(1000, '\xff')));
}

}  // namespace
}  // namespace goblin
