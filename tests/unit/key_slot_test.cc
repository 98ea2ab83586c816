#include "core/key_slot.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

namespace goblin {
namespace {

// The check value of CRC-16/XMODEM, and slots redis-server 7.0's CLUSTER KEYSLOT answers.
TEST(KeySlotTest, MatchesRedisClusterSlots) {
  EXPECT_EQ(Crc16("123456789"), 0x31c3);
  EXPECT_EQ(KeySlot("foo"), 12182);
  EXPECT_EQ(KeySlot("bar"), 5061);
  EXPECT_EQ(KeySlot(""), 0);
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("user1000"));
  EXPECT_EQ(KeySlot("{user1000}.followers"), KeySlot("user1000"));
}

TEST(KeySlotTest, HashTagIsBetweenTheFirstBraces) {
  EXPECT_EQ(HashTagOf("{a}b"), "a");
  EXPECT_EQ(HashTagOf("x{a}{b}"), "a");
  EXPECT_EQ(HashTagOf("x{{a}}"), "{a");
  EXPECT_EQ(HashTagOf("{}a"), "{}a");    // an empty tag hashes the whole key
  EXPECT_EQ(HashTagOf("a{b"), "a{b");    // no closing brace
  EXPECT_EQ(HashTagOf("a}b{"), "a}b{");  // the closing brace must follow the opening one
  EXPECT_EQ(HashTagOf("{}{a}"), "{}{a}");
}

// The table-driven CRC against the bit-at-a-time definition.
TEST(KeySlotTest, TableMatchesBitwiseDefinitionOnRandomInput) {
  std::mt19937_64 rng(20261206);
  for (int round = 0; round < 2000; ++round) {
    std::string data(rng() % 64, '\0');
    for (char& c : data) c = static_cast<char>(rng());
    uint16_t expected = 0;
    for (const char c : data) {
      expected ^= static_cast<uint16_t>(static_cast<uint8_t>(c) << 8);
      for (int bit = 0; bit < 8; ++bit) {
        expected = (expected & 0x8000) != 0 ? static_cast<uint16_t>((expected << 1) ^ 0x1021)
                                            : static_cast<uint16_t>(expected << 1);
      }
    }
    ASSERT_EQ(Crc16(data), expected) << "round " << round;
    ASSERT_LT(KeySlot(data), kClusterSlots);
  }
}

}  // namespace
}  // namespace goblin
