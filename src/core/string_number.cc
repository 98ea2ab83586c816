#include "core/string_number.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace goblin {

bool ParseInt64(std::string_view text, int64_t* value) {
  const size_t n = text.size();
  if (n == 0 || n > 20) return false;
  const char* p = text.data();
  if (n == 1 && p[0] == '0') {
    *value = 0;
    return true;
  }
  size_t i = 0;
  bool negative = false;
  if (p[0] == '-') {
    negative = true;
    if (++i == n) return false;
  }
  if (p[i] < '1' || p[i] > '9') return false;
  uint64_t magnitude = 0;
  for (; i < n; ++i) {
    if (p[i] < '0' || p[i] > '9') return false;
    uint64_t digit = static_cast<uint64_t>(p[i] - '0');
    if (magnitude > (UINT64_MAX - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  if (negative) {
    if (magnitude > static_cast<uint64_t>(INT64_MAX) + 1) return false;
    *value = static_cast<int64_t>(0 - magnitude);
  } else {
    if (magnitude > static_cast<uint64_t>(INT64_MAX)) return false;
    *value = static_cast<int64_t>(magnitude);
  }
  return true;
}

size_t FormatInt64(int64_t v, char* buf) {
  auto result = std::to_chars(buf, buf + kInt64TextMax, v);
  return static_cast<size_t>(result.ptr - buf);
}

std::string Int64ToString(int64_t v) {
  char buf[kInt64TextMax];
  return std::string(buf, FormatInt64(v, buf));
}

namespace {
// strtod/strtold need a NUL-terminated copy; Redis caps numeric text at 5 KB the same way.
constexpr size_t kMaxNumberText = 5 * 1024;
}  // namespace

bool ParseLongDouble(std::string_view text, long double* value) {
  if (text.empty() || text.size() >= kMaxNumberText) return false;
  char buf[kMaxNumberText];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  if (std::isspace(static_cast<unsigned char>(buf[0]))) return false;
  errno = 0;
  char* end;
  long double v = std::strtold(buf, &end);
  if (*end != '\0' || std::isnan(v)) return false;
  if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)) return false;
  *value = v;
  return true;
}

std::string FormatLongDoubleHuman(long double v) {
  char buf[kMaxNumberText];
  int len = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return "0";
  if (std::memchr(buf, '.', static_cast<size_t>(len)) != nullptr) {
    while (len > 0 && buf[len - 1] == '0') --len;
    if (len > 0 && buf[len - 1] == '.') --len;
  }
  std::string out(buf, static_cast<size_t>(len));
  if (out == "-0") out = "0";
  return out;
}

bool ParseDouble(std::string_view text, double* value) {
  if (text.empty() || text.size() >= kMaxNumberText) return false;
  char buf[kMaxNumberText];
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  if (std::isspace(static_cast<unsigned char>(buf[0]))) return false;
  errno = 0;
  char* end;
  double v = std::strtod(buf, &end);
  if (*end != '\0' || std::isnan(v)) return false;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return false;
  *value = v;
  return true;
}

std::string FormatDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  if (v > -1e17 && v < 1e17 && v == std::trunc(v)) {
    // -0.0 prints as "-0", as in Redis.
    if (v == 0 && std::signbit(v)) return "-0";
    return Int64ToString(static_cast<int64_t>(v));
  }
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, result.ptr);
}

}  // namespace goblin
