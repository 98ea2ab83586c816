#include "core/glob.h"

#include <cctype>

namespace goblin {
namespace {

char Fold(char c, bool nocase) {
  return nocase ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
}

// Matches a bracket class starting after '['; advances p past the closing ']'.
bool MatchClass(const char*& p, const char* pend, char c, bool nocase) {
  bool negate = false;
  if (p < pend && *p == '^') {
    negate = true;
    ++p;
  }
  bool matched = false;
  while (p < pend && *p != ']') {
    if (*p == '\\' && p + 1 < pend) {
      ++p;
      if (Fold(*p, nocase) == Fold(c, nocase)) matched = true;
    } else if (p + 2 < pend && p[1] == '-' && p[2] != ']') {
      unsigned char lo = static_cast<unsigned char>(Fold(p[0], nocase));
      unsigned char hi = static_cast<unsigned char>(Fold(p[2], nocase));
      if (lo > hi) std::swap(lo, hi);
      unsigned char x = static_cast<unsigned char>(Fold(c, nocase));
      if (x >= lo && x <= hi) matched = true;
      p += 2;
    } else if (Fold(*p, nocase) == Fold(c, nocase)) {
      matched = true;
    }
    ++p;
  }
  if (p < pend) ++p;  // the ']'
  return negate ? !matched : matched;
}

// Iterative matcher with single-star backtracking: linear in practice, and without the
// exponential blow-up of naive recursion on patterns such as "*a*a*a*a*b".
bool Match(const char* p, const char* pend, const char* s, const char* send, bool nocase) {
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
        if (Fold(*q, nocase) == Fold(*s, nocase)) {
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
