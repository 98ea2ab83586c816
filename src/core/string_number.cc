#include "core/string_number.h"

#include <algorithm>
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
  // A NUL inside the text stops strtold early: that is trailing garbage too.
  if (end != buf + text.size() || std::isnan(v)) return false;
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
  if (len == 2 && buf[0] == '-' && buf[1] == '0') return "0";
  return std::string(buf, static_cast<size_t>(len));
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
  if (end != buf + text.size() || std::isnan(v)) return false;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return false;
  *value = v;
  return true;
}

namespace {

// ---- Redis 7.2's double text: Grisu2 digits (Loitsch 2010) laid out as Redis's fpconv does.
//
// The digits must be Grisu2's, not the shortest: for about one double in a thousand Grisu2
// gives a longer (still round-tripping) digit string, e.g. 1e23 is "99999999999999990000000",
// and Redis's reply carries exactly those bytes.

// A number significand * 2^exponent with a 64-bit significand ("do-it-yourself float").
struct DiyFp {
  uint64_t significand;
  int exponent;
};

// 10^k for k = kFirstCachedPower + kCachedPowerStep * i: the significand normalized to 64
// bits (top bit set) and rounded to nearest, with its binary exponent. Generated with exact
// rational arithmetic; these are the values every Grisu implementation uses.
constexpr int kFirstCachedPower = -348;
constexpr int kCachedPowerStep = 8;
constexpr DiyFp kCachedPowers[] = {
    {0xfa8fd5a0081c0288, -1220}, {0xbaaee17fa23ebf76, -1193}, {0x8b16fb203055ac76, -1166},
    {0xcf42894a5dce35ea, -1140}, {0x9a6bb0aa55653b2d, -1113}, {0xe61acf033d1a45df, -1087},
    {0xab70fe17c79ac6ca, -1060}, {0xff77b1fcbebcdc4f, -1034}, {0xbe5691ef416bd60c, -1007},
    {0x8dd01fad907ffc3c, -980},  {0xd3515c2831559a83, -954},  {0x9d71ac8fada6c9b5, -927},
    {0xea9c227723ee8bcb, -901},  {0xaecc49914078536d, -874},  {0x823c12795db6ce57, -847},
    {0xc21094364dfb5637, -821},  {0x9096ea6f3848984f, -794},  {0xd77485cb25823ac7, -768},
    {0xa086cfcd97bf97f4, -741},  {0xef340a98172aace5, -715},  {0xb23867fb2a35b28e, -688},
    {0x84c8d4dfd2c63f3b, -661},  {0xc5dd44271ad3cdba, -635},  {0x936b9fcebb25c996, -608},
    {0xdbac6c247d62a584, -582},  {0xa3ab66580d5fdaf6, -555},  {0xf3e2f893dec3f126, -529},
    {0xb5b5ada8aaff80b8, -502},  {0x87625f056c7c4a8b, -475},  {0xc9bcff6034c13053, -449},
    {0x964e858c91ba2655, -422},  {0xdff9772470297ebd, -396},  {0xa6dfbd9fb8e5b88f, -369},
    {0xf8a95fcf88747d94, -343},  {0xb94470938fa89bcf, -316},  {0x8a08f0f8bf0f156b, -289},
    {0xcdb02555653131b6, -263},  {0x993fe2c6d07b7fac, -236},  {0xe45c10c42a2b3b06, -210},
    {0xaa242499697392d3, -183},  {0xfd87b5f28300ca0e, -157},  {0xbce5086492111aeb, -130},
    {0x8cbccc096f5088cc, -103},  {0xd1b71758e219652c, -77},   {0x9c40000000000000, -50},
    {0xe8d4a51000000000, -24},   {0xad78ebc5ac620000, 3},     {0x813f3978f8940984, 30},
    {0xc097ce7bc90715b3, 56},    {0x8f7e32ce7bea5c70, 83},    {0xd5d238a4abe98068, 109},
    {0x9f4f2726179a2245, 136},   {0xed63a231d4c4fb27, 162},   {0xb0de65388cc8ada8, 189},
    {0x83c7088e1aab65db, 216},   {0xc45d1df942711d9a, 242},   {0x924d692ca61be758, 269},
    {0xda01ee641a708dea, 295},   {0xa26da3999aef774a, 322},   {0xf209787bb47d6b85, 348},
    {0xb454e4a179dd1877, 375},   {0x865b86925b9bc5c2, 402},   {0xc83553c5c8965d3d, 428},
    {0x952ab45cfa97a0b3, 455},   {0xde469fbd99a05fe3, 481},   {0xa59bc234db398c25, 508},
    {0xf6c69a72a3989f5c, 534},   {0xb7dcbf5354e9bece, 561},   {0x88fcf317f22241e2, 588},
    {0xcc20ce9bd35c78a5, 614},   {0x98165af37b2153df, 641},   {0xe2a0b5dc971f303a, 667},
    {0xa8d9d1535ce3b396, 694},   {0xfb9b7cd9a4a7443c, 720},   {0xbb764c4ca7a44410, 747},
    {0x8bab8eefb6409c1a, 774},   {0xd01fef10a657842c, 800},   {0x9b10a4e5e9913129, 827},
    {0xe7109bfba19c0c9d, 853},   {0xac2820d9623bf429, 880},   {0x80444b5e7aa7cf85, 907},
    {0xbf21e44003acdd2d, 933},   {0x8e679c2f5e44ff8f, 960},   {0xd433179d9c8cb841, 986},
    {0x9e19db92b4e31ba9, 1013},  {0xeb96bf6ebadf77d9, 1039},  {0xaf87023b9bf0ee6b, 1066}};

constexpr uint64_t kPowersOfTen[] = {1ULL,         10ULL,        100ULL,     1000ULL,
                                     10000ULL,     100000ULL,    1000000ULL, 10000000ULL,
                                     100000000ULL, 1000000000ULL};

constexpr uint64_t kHiddenBit = 1ULL << 52;

// The 64x64 product's high 64 bits, rounded half up.
DiyFp Multiply(DiyFp a, DiyFp b) {
  unsigned __int128 product = static_cast<unsigned __int128>(a.significand) * b.significand;
  product += static_cast<unsigned __int128>(1) << 63;
  return {static_cast<uint64_t>(product >> 64), a.exponent + b.exponent + 64};
}

// The cached power whose product with a number of binary exponent `exponent` lands in
// [2^-60, 2^-32) of scale; *decimal_exponent receives its k. The starting guess and the walk
// are those of fpconv, so the same power is chosen where two would do.
DiyFp CachedPower(int exponent, int* decimal_exponent) {
  const int approx = static_cast<int>(-(exponent + 87) * 0.30102999566398114);
  int index = (approx - kFirstCachedPower) / kCachedPowerStep;
  while (true) {
    int scaled = exponent + kCachedPowers[index].exponent + 64;
    if (scaled < -60) {
      ++index;
    } else if (scaled > -32) {
      --index;
    } else {
      *decimal_exponent = kFirstCachedPower + index * kCachedPowerStep;
      return kCachedPowers[index];
    }
  }
}

// Grisu's "weed" step: moves the last digit down while that brings the number closer to the
// exact value and stays inside the safe interval.
void RoundLastDigit(char* digits, int count, uint64_t delta, uint64_t rest, uint64_t ten_kappa,
                    uint64_t distance) {
  while (rest < distance && delta - rest >= ten_kappa &&
         (rest + ten_kappa < distance || distance - rest > rest + ten_kappa - distance)) {
    --digits[count - 1];
    rest += ten_kappa;
  }
}

// Writes the decimal digits of positive finite v (at most 17) and sets *exponent so that
// v ~ digits * 10^exponent. Returns the number of digits.
int Grisu2Digits(double v, char* digits, int* exponent) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  const uint64_t fraction = bits & (kHiddenBit - 1);
  const int biased_exponent = static_cast<int>((bits >> 52) & 0x7ff);
  DiyFp w = biased_exponent != 0 ? DiyFp{fraction + kHiddenBit, biased_exponent - 1075}
                                 : DiyFp{fraction, -1074};

  // The boundaries halfway to the neighbouring doubles, on a common exponent.
  DiyFp upper{(w.significand << 1) + 1, w.exponent - 1};
  while ((upper.significand & (kHiddenBit << 1)) == 0) {
    upper.significand <<= 1;
    --upper.exponent;
  }
  upper.significand <<= 10;
  upper.exponent -= 10;
  const int lower_shift = w.significand == kHiddenBit ? 2 : 1;
  DiyFp lower{(w.significand << lower_shift) - 1, w.exponent - lower_shift};
  lower.significand <<= lower.exponent - upper.exponent;
  lower.exponent = upper.exponent;

  while ((w.significand & kHiddenBit) == 0) {
    w.significand <<= 1;
    --w.exponent;
  }
  w.significand <<= 11;
  w.exponent -= 11;

  int k;
  const DiyFp power = CachedPower(upper.exponent, &k);
  w = Multiply(w, power);
  upper = Multiply(upper, power);
  lower = Multiply(lower, power);
  ++lower.significand;
  --upper.significand;
  *exponent = -k;

  // Digit generation: the integral part of `upper` first, then its fraction.
  const uint64_t distance = upper.significand - w.significand;
  uint64_t delta = upper.significand - lower.significand;
  const int shift = -upper.exponent;
  const uint64_t one = 1ULL << shift;
  uint64_t integral = upper.significand >> shift;
  uint64_t fractional = upper.significand & (one - 1);
  int count = 0;
  for (int kappa = 9; kappa >= 0; --kappa) {
    const uint64_t divisor = kPowersOfTen[kappa];
    const uint64_t digit = integral / divisor;
    if (digit != 0 || count != 0) digits[count++] = static_cast<char>('0' + digit);
    integral -= digit * divisor;
    const uint64_t rest = (integral << shift) + fractional;
    if (rest <= delta) {
      *exponent += kappa;
      RoundLastDigit(digits, count, delta, rest, divisor << shift, distance);
      return count;
    }
  }
  uint64_t unit = 1;
  for (int kappa = -1;; --kappa) {
    fractional *= 10;
    delta *= 10;
    unit *= 10;
    const uint64_t digit = fractional >> shift;
    if (digit != 0 || count != 0) digits[count++] = static_cast<char>('0' + digit);
    fractional &= one - 1;
    if (fractional < delta) {
      *exponent += kappa;
      RoundLastDigit(digits, count, delta, fractional, one, distance * unit);
      return count;
    }
  }
}

// fpconv's layout of digits * 10^exponent (see FormatDouble in the header).
void AppendLaidOut(const char* digits, int count, int exponent, bool negative, std::string* out) {
  const int scientific_exponent = exponent + count - 1;
  const int magnitude = scientific_exponent < 0 ? -scientific_exponent : scientific_exponent;
  if (exponent >= 0 && magnitude < count + 7) {
    out->append(digits, static_cast<size_t>(count));
    out->append(static_cast<size_t>(exponent), '0');
    return;
  }
  if (exponent < 0 && (exponent > -7 || magnitude < 4)) {
    const int integral_digits = count + exponent;
    if (integral_digits <= 0) {
      out->append("0.");
      out->append(static_cast<size_t>(-integral_digits), '0');
      out->append(digits, static_cast<size_t>(count));
    } else {
      out->append(digits, static_cast<size_t>(integral_digits));
      out->push_back('.');
      out->append(digits + integral_digits, static_cast<size_t>(count - integral_digits));
    }
    return;
  }
  count = std::min(count, negative ? 17 : 18);
  out->push_back(digits[0]);
  if (count > 1) {
    out->push_back('.');
    out->append(digits + 1, static_cast<size_t>(count - 1));
  }
  out->push_back('e');
  out->push_back(scientific_exponent < 0 ? '-' : '+');
  out->append(std::to_string(magnitude));
}

}  // namespace

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  // Redis's double2ll window: |v| <= 2^62 (LLONG_MAX / 2 as a double) with no fraction.
  constexpr double kIntegerLimit = static_cast<double>(INT64_MAX / 2);
  if (v >= -kIntegerLimit && v <= kIntegerLimit) {
    const int64_t integer = static_cast<int64_t>(v);
    if (static_cast<double>(integer) == v) return Int64ToString(integer);
  }
  std::string out;
  const bool negative = std::signbit(v);
  if (negative) out.push_back('-');
  char digits[24];
  int exponent;
  const int count = Grisu2Digits(negative ? -v : v, digits, &exponent);
  AppendLaidOut(digits, count, exponent, negative, &out);
  return out;
}

}  // namespace goblin
