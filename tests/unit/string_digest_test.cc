// core/string_digest.h against XXH3-64 digests computed outside Goblin (`xxhsum -H3` from
// Debian's xxhash package) and the example of the DIGEST documentation.
#include "core/string_digest.h"

#include <gtest/gtest.h>

#include <string>

namespace goblin {
namespace {

TEST(StringDigestTest, KnownVectors) {
  EXPECT_EQ(StringDigestHex("Hello world"), "b6acb9d84a38ff74");  // the DIGEST page's example
  EXPECT_EQ(StringDigestHex(""), "2d06800538d394c2");
  EXPECT_EQ(StringDigestHex("a"), "e6c632b61e964e1f");
  EXPECT_EQ(StringDigestHex("hello"), "9555e8555c62dcfd");
  EXPECT_EQ(StringDigestHex("12345"), "f34099ede96b5581");
  EXPECT_EQ(StringDigestHex(std::string(300, 'x')), "a5d1b4607dc83554");
  EXPECT_EQ(StringDigestHex(std::string(1000, 'a')), "b3e7af627147db7c");
}

TEST(StringDigestTest, LeadingZerosAreWritten) {
  EXPECT_EQ(StringDigestHex("v8"), "0cc76dbb41381419");
  EXPECT_EQ(StringDigestHex("v20"), "07be9a2e05c347c4");
  EXPECT_EQ(StringDigestHex("v25"), "037b301ec980ad5f");
  EXPECT_EQ(StringDigest("v25"), 0x037b301ec980ad5fULL);
}

TEST(StringDigestTest, MatchesIgnoresCaseOnly) {
  EXPECT_TRUE(DigestMatches("Hello world", "b6acb9d84a38ff74"));
  EXPECT_TRUE(DigestMatches("Hello world", "B6ACB9D84A38FF74"));
  EXPECT_FALSE(DigestMatches("Hello world", "b6acb9d84a38ff75"));
  EXPECT_FALSE(DigestMatches("Hello world", "b6acb9d84a38ff7"));
  EXPECT_FALSE(DigestMatches("Hello world", "0b6acb9d84a38ff74"));
  EXPECT_FALSE(DigestMatches("v25", "37b301ec980ad5f"));
}

}  // namespace
}  // namespace goblin
