// core/bitop.h against a model that decides each result bit from its definition (how many
// sources have the bit set, and whether the first does), over seeded random sources of unequal
// lengths, and against the examples of the BITOP documentation.
#include "core/bitop.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace goblin::bitop {
namespace {

bool BitAt(const std::string& bytes, size_t bit) {
  const size_t byte = bit / 8;
  return byte < bytes.size() && ((static_cast<uint8_t>(bytes[byte]) >> (7 - bit % 8)) & 1);
}

// The operation's definition, one bit at a time.
std::string Model(Op op, const std::vector<std::string>& sources) {
  size_t length = 0;
  for (const std::string& s : sources) length = std::max(length, s.size());
  std::string out(length, '\0');
  for (size_t bit = 0; bit < length * 8; ++bit) {
    const bool first = BitAt(sources[0], bit);
    size_t set = 0, set_in_others = 0;
    for (size_t k = 0; k < sources.size(); ++k) {
      if (!BitAt(sources[k], bit)) continue;
      ++set;
      if (k > 0) ++set_in_others;
    }
    bool value = false;
    switch (op) {
      case Op::kAnd:
        value = set == sources.size();
        break;
      case Op::kOr:
        value = set > 0;
        break;
      case Op::kXor:
        value = set % 2 == 1;
        break;
      case Op::kNot:
        value = !first;
        break;
      case Op::kDiff:
        value = first && set_in_others == 0;
        break;
      case Op::kDiff1:
        value = !first && set_in_others > 0;
        break;
      case Op::kAndOr:
        value = first && set_in_others > 0;
        break;
      case Op::kOne:
        value = set == 1;
        break;
    }
    if (value) out[bit / 8] = static_cast<char>(out[bit / 8] | (0x80 >> (bit % 8)));
  }
  return out;
}

std::string Combine(Op op, const std::vector<std::string>& sources) {
  const std::vector<std::string_view> views(sources.begin(), sources.end());
  return Apply(op, views);
}

TEST(BitopTest, ParsesEveryNameInAnyCase) {
  EXPECT_EQ(ParseOp("and"), Op::kAnd);
  EXPECT_EQ(ParseOp("Or"), Op::kOr);
  EXPECT_EQ(ParseOp("XOR"), Op::kXor);
  EXPECT_EQ(ParseOp("not"), Op::kNot);
  EXPECT_EQ(ParseOp("diff"), Op::kDiff);
  EXPECT_EQ(ParseOp("DIFF1"), Op::kDiff1);
  EXPECT_EQ(ParseOp("AndOr"), Op::kAndOr);
  EXPECT_EQ(ParseOp("one"), Op::kOne);
  EXPECT_EQ(ParseOp("diff2"), std::nullopt);
  EXPECT_EQ(ParseOp("an"), std::nullopt);
  EXPECT_EQ(ParseOp(""), std::nullopt);
}

TEST(BitopTest, TwoSourceOperations) {
  EXPECT_TRUE(NeedsTwoSources(Op::kDiff));
  EXPECT_TRUE(NeedsTwoSources(Op::kDiff1));
  EXPECT_TRUE(NeedsTwoSources(Op::kAndOr));
  EXPECT_FALSE(NeedsTwoSources(Op::kOne));
  EXPECT_FALSE(NeedsTwoSources(Op::kAnd));
}

// BITFIELD key1 SET i8 #0 255, key2 SET i8 #0 85, BITOP AND: 85.
TEST(BitopTest, DocumentedAndExample) { EXPECT_EQ(Combine(Op::kAnd, {"\xff", "\x55"}), "\x55"); }

TEST(BitopTest, EachOperationOnOneByte) {
  // X = 1100 1010, Y1 = 1010 0110, Y2 = 0110 0011
  const std::vector<std::string> s = {"\xca", "\xa6", "\x63"};
  EXPECT_EQ(Combine(Op::kDiff, s), "\x08");   // X & ~(Y1 | Y2) = 1100 1010 & 0000 1000
  EXPECT_EQ(Combine(Op::kDiff1, s), "\x25");  // ~X & (Y1 | Y2) = 0011 0101 & 1110 0111
  EXPECT_EQ(Combine(Op::kAndOr, s), "\xc2");  // X & (Y1 | Y2)  = 1100 1010 & 1110 0111
  EXPECT_EQ(Combine(Op::kOne, s), "\x0d");    // set in exactly one: 0000 1101
  EXPECT_EQ(Combine(Op::kOne, {"\xca"}), "\xca");
}

TEST(BitopTest, ShorterSourcesReadAsZeros) {
  EXPECT_EQ(Combine(Op::kDiff1, {"", std::string("\x0f\xf0", 2)}), std::string("\x0f\xf0", 2));
  EXPECT_EQ(Combine(Op::kDiff, {std::string("\xff\xff", 2), "\xff"}), std::string("\x00\xff", 2));
  EXPECT_EQ(Combine(Op::kAndOr, {std::string("\xff\xff", 2), "", "\x01"}),
            std::string("\x01\x00", 2));
  EXPECT_EQ(Combine(Op::kNot, {""}), "");
  EXPECT_EQ(Combine(Op::kOne, {"", ""}), "");
}

TEST(BitopTest, MatchesTheModelOnRandomSources) {
  std::mt19937_64 rng(20250810);
  const Op ops[] = {Op::kAnd,  Op::kOr,    Op::kXor,   Op::kNot,
                    Op::kDiff, Op::kDiff1, Op::kAndOr, Op::kOne};
  for (int round = 0; round < 4000; ++round) {
    const Op op = ops[rng() % 8];
    size_t count = op == Op::kNot ? 1 : 1 + rng() % 6;
    if (NeedsTwoSources(op) && count < 2) count = 2;
    std::vector<std::string> sources(count);
    for (std::string& source : sources) {
      source.resize(rng() % 40);
      // Sparse and dense bytes both, so that every count of set bits shows up.
      const bool dense = rng() % 2 == 0;
      for (char& c : source) {
        c = static_cast<char>(dense ? (rng() | rng()) : (rng() & rng() & rng()));
      }
    }
    ASSERT_EQ(Combine(op, sources), Model(op, sources)) << "round " << round;
  }
}

}  // namespace
}  // namespace goblin::bitop
