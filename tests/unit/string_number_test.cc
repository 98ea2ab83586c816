// Number <-> text conversions against Redis's rules.
//  - ParseInt64: util.c string2ll (its own unit test's cases, plus OBJECT ENCODING answers).
//  - ParseLongDouble / FormatLongDoubleHuman: what redis-server 7.0 answers to INCRBYFLOAT.
//  - ParseDouble: what redis-server 7.0 accepts as a ZADD score.
//  - FormatDouble: the text of Redis 7.2's d2string (util.c with deps/fpconv's Grisu2), produced
//    by that C code compiled on its own.
#include "core/string_number.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

namespace goblin {
namespace {

using namespace std::string_literals;
using namespace std::string_view_literals;

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- ParseInt64 ----

TEST(ParseInt64Test, AcceptsCanonicalIntegers) {
  const std::pair<std::string_view, int64_t> cases[] = {
      {"0", 0},
      {"1", 1},
      {"-1", -1},
      {"99", 99},
      {"-99", -99},
      {"10", 10},
      {"1000000", 1000000},
      {"9223372036854775807", INT64_MAX},
      {"-9223372036854775808", INT64_MIN},
      {"-9223372036854775807", INT64_MIN + 1},
      {"12345678901234567", 12345678901234567},
  };
  for (const auto& [text, expected] : cases) {
    int64_t value = 42;
    ASSERT_TRUE(ParseInt64(text, &value)) << text;
    EXPECT_EQ(value, expected) << text;
  }
}

TEST(ParseInt64Test, RejectsWhatString2llRejects) {
  for (std::string_view text : {""sv,
                                "-"sv,
                                "-0"sv,
                                "+1"sv,
                                "+0"sv,
                                "01"sv,
                                "00"sv,
                                "-01"sv,
                                " 1"sv,
                                "1 "sv,
                                "1a"sv,
                                "a1"sv,
                                "1.0"sv,
                                "1e3"sv,
                                "0x10"sv,
                                "--1"sv,
                                "9223372036854775808"sv,
                                "-9223372036854775809"sv,
                                "18446744073709551615"sv,
                                "18446744073709551616"sv,
                                "99999999999999999999"sv,
                                "-99999999999999999999"sv,
                                "100000000000000000000"sv,
                                "1\0"sv,
                                "\0"sv,
                                "1\0002"sv}) {
    int64_t value = 0;
    EXPECT_FALSE(ParseInt64(text, &value)) << testing::PrintToString(std::string(text));
  }
}

TEST(ParseInt64Test, ReadsOnlyTheViewNotPastIt) {
  const char buffer[] = "123456";
  int64_t value = 0;
  ASSERT_TRUE(ParseInt64(std::string_view(buffer, 3), &value));
  EXPECT_EQ(value, 123);
  EXPECT_FALSE(ParseInt64(std::string_view(buffer, 0), &value));
}

// ---- FormatInt64 ----

TEST(FormatInt64Test, WritesDecimalText) {
  const std::pair<int64_t, std::string> cases[] = {
      {0, "0"},
      {7, "7"},
      {-1, "-1"},
      {1000, "1000"},
      {INT64_MAX, "9223372036854775807"},
      {INT64_MIN, "-9223372036854775808"},
  };
  for (const auto& [value, text] : cases) {
    char buf[kInt64TextMax];
    size_t n = FormatInt64(value, buf);
    EXPECT_EQ(std::string(buf, n), text);
    EXPECT_EQ(Int64ToString(value), text);
  }
  EXPECT_GE(kInt64TextMax, std::string("-9223372036854775808").size());
}

TEST(FormatInt64Test, RoundTripsThroughParse) {
  for (int64_t v : {INT64_MIN, INT64_MIN + 1, int64_t{-123456789}, int64_t{0}, int64_t{42},
                    INT64_MAX - 1, INT64_MAX}) {
    int64_t back = 0;
    ASSERT_TRUE(ParseInt64(Int64ToString(v), &back));
    EXPECT_EQ(back, v);
  }
}

// ---- ParseLongDouble / FormatLongDoubleHuman (INCRBYFLOAT) ----

long double ParseLd(std::string_view text) {
  long double value = -12345;
  EXPECT_TRUE(ParseLongDouble(text, &value)) << text;
  return value;
}

// INCRBYFLOAT k <increment> on a key holding <stored>, as Redis computes and prints it.
std::string IncrByFloat(std::string_view stored, std::string_view increment) {
  return FormatLongDoubleHuman(ParseLd(stored) + ParseLd(increment));
}

TEST(LongDoubleTest, IncrByFloatResultsMatchRedis) {
  EXPECT_EQ(IncrByFloat("10.5", "0.1"), "10.6");
  EXPECT_EQ(IncrByFloat("3.0e3", "0"), "3000");
  EXPECT_EQ(IncrByFloat("5.0e3", "-5.0e3"), "0");
  EXPECT_EQ(IncrByFloat("0", "1e-5"), "0.00001");
  EXPECT_EQ(IncrByFloat("1", "0.1"), "1.1");
  EXPECT_EQ(IncrByFloat("0.1", "0.2"), "0.3");
  EXPECT_EQ(IncrByFloat("10", "0.5"), "10.5");
  EXPECT_EQ(IncrByFloat("1", "-1"), "0");
  EXPECT_EQ(IncrByFloat("0", "-2.5"), "-2.5");
  EXPECT_EQ(IncrByFloat("0", "0x10"), "16");
  EXPECT_EQ(IncrByFloat("0", ".5"), "0.5");
  EXPECT_EQ(IncrByFloat("0", "5."), "5");
  EXPECT_EQ(IncrByFloat("0", "+1.5"), "1.5");
  EXPECT_EQ(IncrByFloat("0", "3.14159265358979323846"), "3.14159265358979324");
  EXPECT_EQ(IncrByFloat("0", "1e-17"), "0.00000000000000001");
  EXPECT_EQ(IncrByFloat("0", "5e-18"), "0");
  // Tiny results round to zero, and a negative zero prints as "0".
  EXPECT_EQ(IncrByFloat("0", "1e-20"), "0");
  EXPECT_EQ(IncrByFloat("-1e-20", "0"), "0");
  EXPECT_EQ(IncrByFloat("0", "123456789012345678901234567890"), "123456789012345678899921813504");
  EXPECT_EQ(IncrByFloat("1e300", "0"),
            "1000000000000000000008997324079559193870523944273290747938260082321265646596180935"
            "7558491520837504971903503725086142748359035925561846729839130962605207486462873271"
            "3564184365329408425510760601678972665293237003055138294762099454029477278188962060"
            "6179267611627097410650567187386105690089424915104006144");
  EXPECT_EQ(IncrByFloat("1.7976931348623157e308", "0"),
            "1797693134862315699959210467741044340483864469443291784853144207651766285231243963"
            "5470186860838708556442879341942552068930870836345113605535789727802647761707349897"
            "7686288394835618163294045594434929537447290627480669417384648879122776218333598953"
            "852832103282504751611691208117720159985926376802466863339536384");
}

TEST(LongDoubleTest, FormatLongDoubleHumanTrimsOnlyAfterTheDot) {
  EXPECT_EQ(FormatLongDoubleHuman(100.0L), "100");
  EXPECT_EQ(FormatLongDoubleHuman(-100.0L), "-100");
  EXPECT_EQ(FormatLongDoubleHuman(0.0L), "0");
  EXPECT_EQ(FormatLongDoubleHuman(-0.0L), "0");
  EXPECT_EQ(FormatLongDoubleHuman(0.5L), "0.5");
  EXPECT_EQ(FormatLongDoubleHuman(1e20L), "100000000000000000000");
}

TEST(LongDoubleTest, ParseAcceptsWhatStrtoldReadsWhole) {
  EXPECT_EQ(ParseLd("10.5"), 10.5L);
  EXPECT_EQ(ParseLd("-3"), -3.0L);
  EXPECT_EQ(ParseLd("1e3"), 1000.0L);
  EXPECT_EQ(ParseLd("0x10"), 16.0L);
  // Infinity parses (INCRBYFLOAT then refuses the sum: "increment would produce NaN or
  // Infinity"), it is not "not a valid float".
  EXPECT_EQ(ParseLd("inf"), std::numeric_limits<long double>::infinity());
  EXPECT_EQ(ParseLd("-inf"), -std::numeric_limits<long double>::infinity());
  // Redis copies into a 5120-byte buffer: 5119 bytes of text are fine.
  EXPECT_EQ(ParseLd("0." + std::string(5117, '0')), 0.0L);
}

TEST(LongDoubleTest, ParseRejectsWhatRedisCallsNotAValidFloat) {
  for (const std::string& text :
       {""s, " 1"s, "1 "s, "\t1"s, "nan"s, "-nan"s, "abc"s, "1e5000"s, "-1e5000"s, "1e-5000"s,
        "1.5x"s, "1\0"s, "1\0002"s, "0." + std::string(5118, '0')}) {
    long double value = 0;
    EXPECT_FALSE(ParseLongDouble(text, &value)) << testing::PrintToString(text.substr(0, 20));
  }
}

// ---- ParseDouble (ZADD scores and the like) ----

TEST(ParseDoubleTest, AcceptsWhatZaddAccepts) {
  const std::pair<std::string_view, double> cases[] = {
      {"1.5", 1.5},       {"-2", -2},      {"0x10", 16},       {".5", 0.5},
      {"5.", 5},          {"1.5e3", 1500}, {"+1", 1},          {"inf", kInf},
      {"+inf", kInf},     {"-inf", -kInf}, {"infinity", kInf}, {"-Infinity", -kInf},
      {"1e-310", 1e-310}, {"0", 0},
  };
  for (const auto& [text, expected] : cases) {
    double value = -12345;
    ASSERT_TRUE(ParseDouble(text, &value)) << text;
    EXPECT_EQ(value, expected) << text;
  }
  double negative_zero = 1;
  ASSERT_TRUE(ParseDouble("-0", &negative_zero));
  EXPECT_TRUE(negative_zero == 0 && std::signbit(negative_zero));
}

TEST(ParseDoubleTest, RejectsWhatZaddRejects) {
  for (const std::string& text : {""s, " 1"s, "1 "s, "nan"s, "NaN"s, "1e400"s, "-1e400"s, "1e-400"s,
                                  "abc"s, "1,5"s, "1\0"s, "1\0002"s}) {
    double value = 0;
    EXPECT_FALSE(ParseDouble(text, &value)) << testing::PrintToString(text);
  }
}

// ---- FormatDouble (Redis 7.2 d2string) ----

TEST(FormatDoubleTest, SpecialValues) {
  EXPECT_EQ(FormatDouble(kInf), "inf");
  EXPECT_EQ(FormatDouble(-kInf), "-inf");
  EXPECT_EQ(FormatDouble(std::nan("")), "nan");
  EXPECT_EQ(FormatDouble(-std::nan("")), "nan");
  EXPECT_EQ(FormatDouble(0.0), "0");
  EXPECT_EQ(FormatDouble(-0.0), "-0");
}

TEST(FormatDoubleTest, IntegersUpTo2To62AreWrittenAsIntegers) {
  EXPECT_EQ(FormatDouble(3000), "3000");
  EXPECT_EQ(FormatDouble(-7), "-7");
  EXPECT_EQ(FormatDouble(1e7), "10000000");
  EXPECT_EQ(FormatDouble(1e15), "1000000000000000");
  EXPECT_EQ(FormatDouble(1e16), "10000000000000000");
  EXPECT_EQ(FormatDouble(1e17), "100000000000000000");
  EXPECT_EQ(FormatDouble(123456789012345678.0), "123456789012345680");
  EXPECT_EQ(FormatDouble(9007199254740993.0), "9007199254740992");
  EXPECT_EQ(FormatDouble(4611686018427387904.0), "4611686018427387904");    // 2^62
  EXPECT_EQ(FormatDouble(-4611686018427387904.0), "-4611686018427387904");  // -2^62
  // Past 2^62 Grisu2 takes over: 17 significant digits, then zeros.
  EXPECT_EQ(FormatDouble(4611686018427388928.0), "4611686018427389000");
  EXPECT_EQ(FormatDouble(-4611686018427388928.0), "-4611686018427389000");
  EXPECT_EQ(FormatDouble(12345678901234567890.0), "12345678901234567000");
  EXPECT_EQ(FormatDouble(5e18), "5e+18");
}

TEST(FormatDoubleTest, MatchesRedis72Text) {
  const std::pair<double, std::string_view> cases[] = {
      {1.1, "1.1"},
      {0.1, "0.1"},
      {1.5, "1.5"},
      {-1.5, "-1.5"},
      {-0.5, "-0.5"},
      {100.5, "100.5"},
      {0.1 + 0.2, "0.30000000000000004"},
      {33.333333333333336, "33.333333333333336"},
      {123456.789012, "123456.789012"},
      {123456789.123, "123456789.123"},
      {0.1234567890123456789, "0.12345678901234568"},
      {123.45678901234567, "123.45678901234567"},
      {1234.5678901234567, "1234.5678901234567"},
      // Up to 6 zeros after the point stay plain; beyond, scientific without exponent padding.
      {0.001, "0.001"},
      {0.0001, "0.0001"},
      {0.001234, "0.001234"},
      {1e-5, "0.00001"},
      {1e-6, "0.000001"},
      {1.2e-6, "1.2e-6"},
      {0.000001234, "1.234e-6"},
      {4.35e-5, "4.35e-5"},
      {1e-7, "1e-7"},
      {1.5e-7, "1.5e-7"},
      {2.5e-7, "2.5e-7"},
      {-9.87654321e-7, "-9.87654321e-7"},
      {-1e-10, "-1e-10"},
      {123e-20, "1.23e-18"},
      // More than 4 integral digits in a 17-digit fraction switch to scientific too.
      {12345.678901234567, "1.2345678901234567e+4"},
      {-12345.678901234567, "-1.2345678901234567e+4"},
      {1234567.8901234567, "1.2345678901234567e+6"},
      // Large values: up to 7 trailing zeros stay plain.
      {1.5e20, "1.5e+20"},
      {1e20, "1e+20"},
      {1e21, "1e+21"},
      {1e22, "1e+22"},
      {1234567890123456e5, "123456789012345600000"},
      {123456789012345e6, "123456789012345000000"},
      {1e100, "1e+100"},
      {1e300, "1e+300"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {2.2250738585072014e-308, "2.2250738585072014e-308"},
      {1e-310, "1e-310"},
      {5e-324, "5e-324"},
      // Grisu2 is not always shortest, and Redis prints what it gives: 1e23 is the double
      // 99999999999999991611392, shortest text "1e+23".
      {1e23, "99999999999999990000000"},
      {-2.1442306985313456e23, "-214423069853134560000000"},
  };
  for (const auto& [value, text] : cases) {
    EXPECT_EQ(FormatDouble(value), text) << "for " << testing::PrintToString(value);
  }
}

TEST(FormatDoubleTest, TextReadsBackToTheSameDouble) {
  // Round trip on a spread of magnitudes and digit counts.
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t bits = state;
    double v;
    std::memcpy(&v, &bits, sizeof(v));
    if (!std::isfinite(v)) continue;
    std::string text = FormatDouble(v);
    double back = 0;
    ASSERT_TRUE(ParseDouble(text, &back)) << text;
    EXPECT_EQ(back, v) << text;
    // The longest texts are "-" + 17 digits + 7 zeros, e.g. "-214423069853134560000000".
    ASSERT_LE(text.size(), 25u) << text;
  }
}

}  // namespace
}  // namespace goblin
