#include "core/glob.h"

#include <utility>

namespace goblin {
namespace {

// Redis compares bytes as the platform's `char`, which is signed on x86-64: range bounds and
// text bytes >= 0x80 are negative there, and Goblin answers as that redis-server does.
// Case folding is the C locale's tolower (Redis never sets LC_CTYPE): ASCII letters only.
int Signed(char c) { return static_cast<signed char>(c); }
int Lower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }
bool SameByte(char a, char b, bool nocase) {
  return nocase ? Lower(Signed(a)) == Lower(Signed(b)) : a == b;
}

// Matches the bracket class that starts after '[' against byte c and advances p past the
// closing ']' (or to pend when the class is unterminated: it then takes the rest of the
// pattern). The order of the checks is stringmatchlen's, and decides the odd cases:
// "[a-]" is the range a..']' with no closing bracket, and an escape is compared exactly
// even with nocase.
bool MatchClass(const char*& p, const char* pend, char c, bool nocase) {
  bool negate = false;
  if (p < pend && *p == '^') {
    negate = true;
    ++p;
  }
  bool matched = false;
  while (p < pend && *p != ']') {
    if (*p == '\\' && pend - p >= 2) {
      ++p;
      if (*p == c) matched = true;
    } else if (pend - p >= 3 && p[1] == '-') {
      int start = Signed(p[0]);
      int end = Signed(p[2]);
      int x = Signed(c);
      if (start > end) std::swap(start, end);
      if (nocase) {  // after the swap, as Redis: [Z-a] folds to the empty z..a
        start = Lower(start);
        end = Lower(end);
        x = Lower(x);
      }
      if (x >= start && x <= end) matched = true;
      p += 2;
    } else if (SameByte(*p, c, nocase)) {
      matched = true;
    }
    ++p;
  }
  if (p < pend) ++p;  // the ']'
  return negate ? !matched : matched;
}

// Iterative matcher that backtracks only to the last '*': a later star can absorb anything an
// earlier one could, so this accepts what stringmatchlen's recursion accepts, in O(pattern x
// text) time instead of its exponential worst case on "*a*a*a*a*b".
bool Match(const char* p, const char* pend, const char* s, const char* send, bool nocase) {
  // stringmatchlen never lets a pattern match an empty string, not even "*" (KEYS * has its
  // own shortcut, so an empty key is listed by "*" but not by "**" or "*?").
  if (s == send) return p == pend;
  const char* star_p = nullptr;
  const char* star_s = nullptr;
  while (s < send) {
    if (p < pend) {
      if (*p == '*') {
        while (p < pend && *p == '*') ++p;
        if (p == pend) return true;
        star_p = p;
        star_s = s;
        continue;
      }
      if (*p == '?') {
        ++p;
        ++s;
        continue;
      }
      if (*p == '[') {
        const char* q = p + 1;
        if (MatchClass(q, pend, *s, nocase)) {
          p = q;
          ++s;
          continue;
        }
      } else {
        const char* q = p;
        if (*q == '\\' && q + 1 < pend) ++q;
        if (SameByte(*q, *s, nocase)) {
          p = q + 1;
          ++s;
          continue;
        }
      }
    }
    if (star_p == nullptr) return false;
    p = star_p;
    s = ++star_s;
  }
  while (p < pend && *p == '*') ++p;
  return p == pend;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  return Match(pattern.data(), pattern.data() + pattern.size(), text.data(),
               text.data() + text.size(), nocase);
}

}  // namespace goblin
