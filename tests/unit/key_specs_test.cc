// Key specs: where each kind of spec finds its keys in a call, and which flags a key gets.
#include "server/key_specs.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace goblin {
namespace {

std::vector<size_t> Positions(const KeySpec& spec, std::vector<std::string_view> argv) {
  std::vector<size_t> out;
  spec.Positions(argv, &out);
  return out;
}

TEST(KeySpecTest, IndexAndRange) {
  const KeySpec one(kKeyRO, KeyBegin::Index(1), KeyFind::Range(0, 1, 0));
  EXPECT_EQ(Positions(one, {"get", "k"}), (std::vector<size_t>{1}));
  EXPECT_EQ(Positions(one, {"get"}), (std::vector<size_t>{}));
  const KeySpec all(kKeyRM, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0));
  EXPECT_EQ(Positions(all, {"del", "a", "b", "c"}), (std::vector<size_t>{1, 2, 3}));
  const KeySpec pairs(kKeyOW, KeyBegin::Index(1), KeyFind::Range(-1, 2, 0));
  EXPECT_EQ(Positions(pairs, {"mset", "a", "1", "b", "2"}), (std::vector<size_t>{1, 3}));
  const KeySpec but_last(kKeyRW, KeyBegin::Index(1), KeyFind::Range(-2, 1, 0));
  EXPECT_EQ(Positions(but_last, {"blpop", "a", "b", "0"}), (std::vector<size_t>{1, 2}));
}

TEST(KeySpecTest, KeywordSearchesForwardOrBackward) {
  // XREAD ... STREAMS a b 0 0: half of what follows the keyword.
  const KeySpec streams(kKeyRO, KeyBegin::Keyword("STREAMS", 1), KeyFind::Range(-1, 1, 2));
  EXPECT_EQ(Positions(streams, {"xread", "count", "2", "streams", "a", "b", "0", "0"}),
            (std::vector<size_t>{4, 5}));
  EXPECT_EQ(Positions(streams, {"xread", "count", "2"}), (std::vector<size_t>{}));
  // MIGRATE ... KEYS a b: searched from the end, so a key named "keys" before it is no keyword.
  const KeySpec keys(kKeyRW, KeyBegin::Keyword("KEYS", -2), KeyFind::Range(-1, 1, 0));
  EXPECT_EQ(Positions(keys, {"migrate", "h", "1", "", "0", "5", "KEYS", "a", "b"}),
            (std::vector<size_t>{7, 8}));
  const KeySpec store(kKeyOW, KeyBegin::Keyword("STORE", 6), KeyFind::Range(0, 1, 0));
  EXPECT_EQ(Positions(store, {"georadius", "k", "1", "2", "3", "km", "store", "d"}),
            (std::vector<size_t>{7}));
  EXPECT_EQ(Positions(store, {"georadius", "store", "1", "2", "3", "km"}),
            (std::vector<size_t>{}));
}

TEST(KeySpecTest, KeynumCountsItsKeys) {
  const KeySpec zunion(kKeyRO, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 1));
  EXPECT_EQ(Positions(zunion, {"zunion", "2", "a", "b", "WEIGHTS", "1", "2"}),
            (std::vector<size_t>{2, 3}));
  EXPECT_EQ(Positions(zunion, {"zunion", "x", "a"}), (std::vector<size_t>{}));
  EXPECT_EQ(Positions(zunion, {"zunion", "-1", "a"}), (std::vector<size_t>{}));
  EXPECT_EQ(Positions(zunion, {"zunion", "5", "a"}), (std::vector<size_t>{}));  // cannot hold 5
}

TEST(KeySpecTest, IncompleteSpecsNameNoPositions) {
  const KeySpec unknown(kKeyOW, KeyBegin::Unknown(), KeyFind::Unknown());
  EXPECT_EQ(Positions(unknown, {"sort", "a", "store", "b"}), (std::vector<size_t>{}));
  const KeySpec incomplete(kKeyRW | kKeyIncomplete, KeyBegin::Index(1), KeyFind::Range(0, 1, 0));
  EXPECT_EQ(Positions(incomplete, {"x", "a"}), (std::vector<size_t>{}));
}

TEST(KeySpecTest, FlagsOfAKey) {
  const std::vector<KeySpec> sort = {
      KeyAt(1, kKeyRO | kKeyAccess),
      KeySpec(kKeyRO | kKeyAccess, KeyBegin::Unknown(), KeyFind::Unknown()),
      KeySpec(kKeyOW | kKeyUpdate, KeyBegin::Unknown(), KeyFind::Unknown())};
  const std::vector<std::string_view> call{"sort", "a", "store", "b"};
  EXPECT_EQ(KeyFlagsOf(sort, call, 1), kKeyRO | kKeyAccess);
  EXPECT_EQ(KeyFlagsOf(sort, call, 3), kKeyOW | kKeyUpdate);  // the last unknown spec's
  const uint32_t set = kKeyRW | kKeyAccess | kKeyUpdate | kKeyVariableFlags;
  EXPECT_EQ(ResolveVariableFlags("set", {"set", "k", "v"}, set), kKeyOW | kKeyUpdate);
  EXPECT_EQ(ResolveVariableFlags("set", {"set", "k", "v", "get"}, set),
            kKeyRW | kKeyAccess | kKeyUpdate);
  // The value "get" is not the option.
  EXPECT_EQ(ResolveVariableFlags("set", {"set", "k", "get"}, set), kKeyOW | kKeyUpdate);
  EXPECT_EQ(ResolveVariableFlags("bitfield", {"bitfield", "k", "get", "u8", "0"}, set),
            kKeyRO | kKeyAccess);
  EXPECT_EQ(ResolveVariableFlags("bitfield", {"bitfield", "k", "set", "u8", "0", "1"}, set),
            kKeyRW | kKeyAccess | kKeyUpdate);
}

TEST(KeySpecTest, CallsThatContradictTheirSpecs) {
  std::vector<size_t> out;
  const KeySpec zunion(kKeyRO, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 1));
  EXPECT_FALSE(zunion.Positions({"zunion", "x", "a"}, &out));
  EXPECT_FALSE(zunion.Positions({"zunion", "2", "a"}, &out));
  EXPECT_TRUE(zunion.Positions({"zunion", "0"}, &out));
  const KeySpec streams(kKeyRO, KeyBegin::Keyword("STREAMS", 1), KeyFind::Range(-1, 1, 2));
  EXPECT_FALSE(streams.Positions({"xread", "streams", "a", "b", "0"}, &out));
  EXPECT_FALSE(streams.Positions({"xread", "streams"}, &out));
  EXPECT_TRUE(out.empty());
}

TEST(KeySpecTest, FlagNamesInRedisOrder) {
  EXPECT_EQ(KeySpecFlagNames(kKeyVariableFlags | kKeyUpdate | kKeyRW | kKeyAccess),
            (std::vector<std::string_view>{"RW", "access", "update", "variable_flags"}));
  EXPECT_EQ(KeySpecFlagNames(0), (std::vector<std::string_view>{}));
}

}  // namespace
}  // namespace goblin
