// core/lcs.h against a plain reference: the full (|a|+1) x (|b|+1) table of lengths and the walk
// back over it as Redis's lcsCommand does it, ranges emitted where Redis emits them.
#include "core/lcs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace goblin {
namespace {

struct Reference {
  uint32_t length = 0;
  std::string text;
  std::vector<LcsRange> ranges;
};

Reference Solve(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<uint32_t>> L(n + 1, std::vector<uint32_t>(m + 1, 0));
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      L[i][j] = a[i - 1] == b[j - 1] ? L[i - 1][j - 1] + 1 : std::max(L[i - 1][j], L[i][j - 1]);
    }
  }
  Reference out;
  out.length = L[n][m];
  out.text.assign(out.length, '?');
  // Redis's walk: `open` is false while no range is being tracked (its arange_start == alen).
  size_t i = n, j = m, next = out.length;
  bool open = false;
  LcsRange range;
  while (i > 0 && j > 0) {
    bool emit = false;
    if (a[i - 1] == b[j - 1]) {
      out.text[--next] = a[i - 1];
      const auto ai = static_cast<uint32_t>(i - 1), bj = static_cast<uint32_t>(j - 1);
      if (!open) {
        range = LcsRange{ai, ai, bj, bj};
        open = true;
      } else if (range.a_start == i && range.b_start == j) {
        range.a_start = ai;
        range.b_start = bj;
      } else {
        emit = true;
      }
      if (range.a_start == 0 || range.b_start == 0) emit = true;
      --i;
      --j;
    } else {
      if (L[i - 1][j] > L[i][j - 1]) {
        --i;
      } else {
        --j;
      }
      if (open) emit = true;
    }
    if (emit) {
      out.ranges.push_back(range);
      open = false;
    }
  }
  return out;
}

std::string RandomString(std::mt19937_64& rng, std::string_view alphabet, size_t max_length) {
  std::string s(rng() % (max_length + 1), '\0');
  for (char& c : s) c = alphabet[rng() % alphabet.size()];
  return s;
}

void ExpectSame(const std::string& a, const std::string& b) {
  const Reference want = Solve(a, b);
  EXPECT_EQ(LcsLength(a, b), want.length) << a << " / " << b;
  const LcsMatches got = LcsWalk(a, b);
  EXPECT_EQ(got.text, want.text) << a << " / " << b;
  ASSERT_EQ(got.ranges.size(), want.ranges.size()) << a << " / " << b;
  for (size_t k = 0; k < want.ranges.size(); ++k) {
    EXPECT_EQ(got.ranges[k], want.ranges[k]) << a << " / " << b << " range " << k;
  }
}

TEST(LcsTest, RandomShortStringsMatchTheTableWalk) {
  std::mt19937_64 rng(11);
  const std::string_view alphabets[] = {"a", "ab", "abc", "acgt", "abcdefghij"};
  for (int round = 0; round < 6000; ++round) {
    const std::string_view alphabet = alphabets[round % 5];
    const size_t max_length = round % 3 == 0 ? 12 : 70;  // 70 crosses a word of columns
    ExpectSame(RandomString(rng, alphabet, max_length), RandomString(rng, alphabet, max_length));
    if (HasFailure()) return;
  }
}

TEST(LcsTest, RandomLongerAndBinaryStrings) {
  std::mt19937_64 rng(12);
  std::string bytes;
  for (int c = 0; c < 256; ++c) bytes.push_back(static_cast<char>(c));
  for (int round = 0; round < 150; ++round) {
    const std::string_view alphabet = round % 2 ? std::string_view("ab") : std::string_view(bytes);
    ExpectSame(RandomString(rng, alphabet, 400), RandomString(rng, alphabet, 300));
    if (HasFailure()) return;
  }
}

TEST(LcsTest, EdgeShapes) {
  ExpectSame("", "");
  ExpectSame("", "abc");
  ExpectSame("abc", "");
  ExpectSame("abc", "abc");
  ExpectSame("abc", "xyz");
  ExpectSame(std::string(200, 'a'), std::string(130, 'a'));
  ExpectSame(std::string(64, 'a'), std::string(64, 'a'));
  ExpectSame("ohmytext", "mynewtext");
  std::string with_nul("a\0b\0c", 5);
  ExpectSame(with_nul, std::string("\0\0c", 3));
}

// Redis's documented example (LCS key1 key2 IDX on "ohmytext" / "mynewtext").
TEST(LcsTest, RedisDocumentationExample) {
  const LcsMatches got = LcsWalk("ohmytext", "mynewtext");
  EXPECT_EQ(got.text, "mytext");
  const std::vector<LcsRange> want = {{4, 7, 5, 8}, {2, 3, 0, 1}};
  EXPECT_EQ(got.ranges, want);
  EXPECT_EQ(LcsLength("ohmytext", "mynewtext"), 6u);
}

}  // namespace
}  // namespace goblin
