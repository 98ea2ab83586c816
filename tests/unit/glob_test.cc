// GlobMatch against Redis's stringmatchlen. The odd cases (empty text, "[a-]", nocase ranges,
// escapes inside classes, bytes >= 0x80) were checked with KEYS and CONFIG GET on
// redis-server 7.0.
#include "core/glob.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <string_view>
#include <utility>

namespace goblin {
namespace {

using namespace std::string_literals;

void ExpectMatch(std::string_view pattern, std::string_view text, bool nocase = false) {
  EXPECT_TRUE(GlobMatch(pattern, text, nocase))
      << testing::PrintToString(std::string(pattern)) << " should match "
      << testing::PrintToString(std::string(text)) << (nocase ? " (nocase)" : "");
}

void ExpectNoMatch(std::string_view pattern, std::string_view text, bool nocase = false) {
  EXPECT_FALSE(GlobMatch(pattern, text, nocase))
      << testing::PrintToString(std::string(pattern)) << " should not match "
      << testing::PrintToString(std::string(text)) << (nocase ? " (nocase)" : "");
}

TEST(GlobTest, Literals) {
  ExpectMatch("hello", "hello");
  ExpectNoMatch("hello", "hell");
  ExpectNoMatch("hello", "helloo");
  ExpectNoMatch("hello", "Hello");
  ExpectMatch("", "");
  ExpectNoMatch("", "a");
  ExpectNoMatch("a", "");
}

TEST(GlobTest, Star) {
  ExpectMatch("*", "abc");
  ExpectMatch("**", "abc");
  ExpectMatch("a*", "a");
  ExpectMatch("a*", "abc");
  ExpectMatch("*c", "abc");
  ExpectMatch("a*c", "ac");
  ExpectMatch("a*c", "abbbc");
  ExpectNoMatch("a*c", "abcd");
  ExpectMatch("user:*", "user:1000");
  ExpectNoMatch("user:*", "users");
  ExpectMatch("*a*b*c*", "xxaxxbxxcxx");
  ExpectNoMatch("*a*b*c*", "xxcxxbxxaxx");
  ExpectMatch("a*b*", "ab");
  ExpectMatch("*ab", "aab");  // the star must give a byte back
}

TEST(GlobTest, EmptyTextMatchesOnlyTheEmptyPattern) {
  // `SET "" v` then `KEYS **` lists nothing (KEYS * lists it through its own shortcut).
  ExpectNoMatch("*", "");
  ExpectNoMatch("**", "");
  ExpectNoMatch("?", "");
  ExpectNoMatch("[^a]", "");
  ExpectMatch("", "");
}

TEST(GlobTest, QuestionMark) {
  ExpectMatch("h?llo", "hello");
  ExpectMatch("h?llo", "hallo");
  ExpectNoMatch("h?llo", "hllo");
  ExpectNoMatch("h?llo", "heello");
  ExpectMatch("???", "abc");
  ExpectNoMatch("???", "ab");
  ExpectMatch("?*", "a");
}

TEST(GlobTest, Classes) {
  ExpectMatch("h[ae]llo", "hello");
  ExpectMatch("h[ae]llo", "hallo");
  ExpectNoMatch("h[ae]llo", "hillo");
  ExpectNoMatch("h[ae]llo", "hllo");
  ExpectMatch("h[^e]llo", "hallo");
  ExpectNoMatch("h[^e]llo", "hello");
  ExpectMatch("h[a-b]llo", "hbllo");
  ExpectNoMatch("h[a-b]llo", "hcllo");
  ExpectMatch("[0-9][0-9]", "42");
  ExpectNoMatch("[0-9][0-9]", "4x");
  ExpectMatch("[^0-9]", "x");
  ExpectNoMatch("[^0-9]", "5");
  // A '-' before the closing bracket makes a range to ']' (see RangeToBracket).
  ExpectNoMatch("[abc-]", "-");
  ExpectMatch("[abc-]", "_");
}

TEST(GlobTest, ReversedRangesAreOrdered) {
  ExpectMatch("[z-a]", "m");
  ExpectMatch("[z-a]", "a");
  ExpectMatch("[z-a]", "z");
  ExpectNoMatch("[z-a]", "A");
  // Without nocase [Z-a] is the bytes 'Z'..'a': "Z[\]^_`a".
  ExpectMatch("[Z-a]", "_");
  ExpectMatch("[a-Z]", "_");
  ExpectNoMatch("[Z-a]", "y");
}

TEST(GlobTest, RangeToBracket) {
  // Redis reads "a-]" as the range a..']' (0x5d..0x61) and the class stays open: KEYS [a-]
  // lists "]", "_" and "a" but not "b" or "-".
  ExpectMatch("[a-]", "]");
  ExpectMatch("[a-]", "_");
  ExpectMatch("[a-]", "a");
  ExpectNoMatch("[a-]", "b");
  ExpectNoMatch("[a-]", "-");
  // The open class swallows the rest of the pattern: [a-]b] is {']'..'a', 'b'}.
  ExpectMatch("[a-]b]", "b");
  ExpectMatch("[a-]b]", "]");
  ExpectNoMatch("[a-]b]", "c");
  ExpectMatch("[a-]*", "a");
  ExpectNoMatch("[a-]*", "ab");
}

TEST(GlobTest, Escapes) {
  ExpectMatch("\\*", "*");
  ExpectNoMatch("\\*", "a");
  ExpectMatch("a\\?", "a?");
  ExpectNoMatch("a\\?", "ab");
  ExpectMatch("\\[a]", "[a]");
  ExpectNoMatch("\\[a]", "a");
  ExpectMatch("\\\\", "\\");
  ExpectMatch("\\a", "a");
  ExpectMatch("[\\]]", "]");
  ExpectMatch("[\\^a]", "^");
  ExpectMatch("[a\\-z]", "-");
  ExpectNoMatch("[a\\-z]", "m");
  ExpectMatch("*\\*", "abc*");
  ExpectNoMatch("*\\*", "abc");
}

TEST(GlobTest, PatternEndingInBackslashOrBracket) {
  // A trailing backslash is a literal backslash.
  ExpectMatch("a\\", "a\\");
  ExpectNoMatch("a\\", "a");
  ExpectMatch("*\\", "x\\");
  // A trailing '[' opens an empty class that matches no byte.
  ExpectNoMatch("a[", "a");
  ExpectNoMatch("a[", "a[");
  ExpectNoMatch("[", "[");
  // A trailing "[^" is an empty negated class: any one byte.
  ExpectMatch("a[^", "ab");
  ExpectNoMatch("a[^", "a");
  // An unterminated class takes the rest of the pattern as its members.
  ExpectMatch("[abc", "b");
  ExpectNoMatch("[abc", "bc");
  ExpectNoMatch("[abc", "d");
  // "[]" is empty, "[^]" any byte; "[]a]" is the empty class then "a]".
  ExpectNoMatch("[]", "]");
  ExpectMatch("[^]", "x");
  ExpectNoMatch("[]a]", "a");
  ExpectNoMatch("[]a]", "]a]");
}

TEST(GlobTest, Nocase) {
  ExpectMatch("HELLO", "hello", true);
  ExpectMatch("hello", "HeLLo", true);
  ExpectNoMatch("HELLO", "hello", false);
  ExpectMatch("h?LLO*", "Hello world", true);
  ExpectMatch("[A-Z]", "q", true);
  ExpectMatch("[a-z]", "Q", true);
  ExpectMatch("[HX]ello", "hello", true);
  ExpectMatch("[^h]ello", "xello", true);
  ExpectNoMatch("[^h]ello", "Hello", true);
  ExpectMatch("\\H", "h", true);
  // A range folds after its bounds are ordered: with nocase [Z-a] is 'z'..'a', empty
  // (CONFIG GET maxmemory-polic[Z-a] lists nothing).
  ExpectNoMatch("[Z-a]", "y", true);
  ExpectNoMatch("[Z-a]", "a", true);
  ExpectNoMatch("[Z-a]", "_", true);
  ExpectNoMatch("[a-Z]", "y", true);
  // An escape inside a class compares exactly (CONFIG GET maxmemory-polic[\Y]* lists nothing).
  ExpectNoMatch("[\\Y]", "y", true);
  ExpectMatch("[\\y]", "y", true);
  ExpectNoMatch("[\\y]", "Y", true);
  // Only ASCII letters fold.
  ExpectNoMatch("\xc9", "\xe9", true);
}

TEST(GlobTest, BinaryStrings) {
  ExpectMatch("a\0*"s, "a\0bc"s);
  ExpectNoMatch("a\0*"s, "a"s);
  ExpectMatch("?"s, "\0"s);
  ExpectMatch("*\0"s, "xyz\0"s);
  ExpectNoMatch("abc"s, "abc\0"s);
  ExpectMatch("\xff", "\xff");
  ExpectMatch("[\x80-\xff]", "\x80");
  ExpectMatch("[\x80-\xff]", "\xfe");
  ExpectMatch("[\x80-\xff]", "\xff");
  ExpectNoMatch("[\x80-\xff]", "a");
}

TEST(GlobTest, HighBytesCompareAsSignedChars) {
  // As redis-server on x86-64: 0xff is -1, so [a-\xff] is -1..'a': KEYS [a-\xff] lists
  // "\x01", "0", "a" and "\xff", not "b", "\x80" or "\xfe".
  for (std::string_view pattern : {"[a-\xff]", "[\xff-a]"}) {
    ExpectMatch(pattern, "\xff");
    ExpectMatch(pattern, "a");
    ExpectMatch(pattern, "0");
    ExpectMatch(pattern, "\x01");
    ExpectNoMatch(pattern, "b");
    ExpectNoMatch(pattern, "\x80");
    ExpectNoMatch(pattern, "\xfe");
  }
  // [\x01-\x80] is -128..1.
  ExpectMatch("[\x01-\x80]", "\x01");
  ExpectMatch("[\x01-\x80]", "\x80");
  ExpectMatch("[\x01-\x80]", "\xfe");
  ExpectMatch("[\x01-\x80]", "\xff");
  ExpectNoMatch("[\x01-\x80]", "0");
}

TEST(GlobTest, PathologicalPatternFinishesFast) {
  const std::string text(100000, 'a');
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch("a*a*a*a*a*a*a*b", text));
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", text));
  EXPECT_TRUE(GlobMatch("a*a*a*a*a*a*a*a", text));
  EXPECT_FALSE(GlobMatch("*?*?*?*?*?*?*?*?*?*?*?*?*b", std::string(2000, 'a')));
  auto elapsed = std::chrono::steady_clock::now() - start;
  // Exponential backtracking would take years; linear-ish work is milliseconds even under
  // sanitizers.
  EXPECT_LT(elapsed, std::chrono::seconds(2));
}

// stringmatchlen's recursion, written plainly from its description (exponential, so only for
// short inputs): the model the iterative matcher must agree with.
bool ModelMatch(std::string_view p, std::string_view s, bool nocase) {
  auto lower = [](int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; };
  auto same = [&](char a, char b) {
    return nocase ? lower(static_cast<signed char>(a)) == lower(static_cast<signed char>(b))
                  : a == b;
  };
  if (p.empty()) return s.empty();
  if (s.empty()) return false;
  if (p[0] == '*') {
    size_t stars = p.find_first_not_of('*');
    if (stars == std::string_view::npos) return true;
    for (size_t i = 0; i < s.size(); ++i) {
      if (ModelMatch(p.substr(stars), s.substr(i), nocase)) return true;
    }
    return false;
  }
  size_t used = 1;
  bool ok;
  if (p[0] == '?') {
    ok = true;
  } else if (p[0] == '[') {
    size_t i = 1;
    bool negate = i < p.size() && p[i] == '^';
    if (negate) ++i;
    bool matched = false;
    while (true) {
      if (i < p.size() && p[i] == '\\' && p.size() - i >= 2) {
        ++i;
        if (p[i] == s[0]) matched = true;
      } else if (i < p.size() && p[i] == ']') {
        break;
      } else if (i >= p.size()) {
        --i;
        break;
      } else if (p.size() - i >= 3 && p[i + 1] == '-') {
        int a = static_cast<signed char>(p[i]), b = static_cast<signed char>(p[i + 2]);
        int c = static_cast<signed char>(s[0]);
        if (a > b) std::swap(a, b);
        if (nocase) {
          a = lower(a);
          b = lower(b);
          c = lower(c);
        }
        if (c >= a && c <= b) matched = true;
        i += 2;
      } else if (same(p[i], s[0])) {
        matched = true;
      }
      ++i;
    }
    ok = negate ? !matched : matched;
    used = i + 1;
  } else if (p[0] == '\\' && p.size() >= 2) {
    ok = same(p[1], s[0]);
    used = 2;
  } else {
    ok = same(p[0], s[0]);
  }
  if (!ok) return false;
  std::string_view rest_p = p.substr(std::min(used, p.size()));
  std::string_view rest_s = s.substr(1);
  if (rest_s.empty()) return rest_p.find_first_not_of('*') == std::string_view::npos;
  return ModelMatch(rest_p, rest_s, nocase);
}

TEST(GlobTest, AgreesWithTheRecursiveModelOnRandomInputs) {
  std::mt19937 rng(20240607);
  const std::string pattern_bytes = "abAB*?[]^-\\\xff\x80";
  const std::string text_bytes = "abAB]^-\\*\xff\x80";
  int matches = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string pattern, text;
    for (int n = rng() % 8; n > 0; --n) pattern += pattern_bytes[rng() % pattern_bytes.size()];
    for (int n = rng() % 7; n > 0; --n) text += text_bytes[rng() % text_bytes.size()];
    bool nocase = rng() % 2;
    bool expected = ModelMatch(pattern, text, nocase);
    matches += expected;
    ASSERT_EQ(GlobMatch(pattern, text, nocase), expected)
        << testing::PrintToString(pattern) << " vs " << testing::PrintToString(text)
        << (nocase ? " nocase" : "");
  }
  EXPECT_GT(matches, 1000);  // the inputs do exercise matches, not only mismatches
}

}  // namespace
}  // namespace goblin
