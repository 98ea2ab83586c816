// Tests of ListpackWriter (core/listpack.h): a decoder written here from Redis's format reads
// back what the writer wrote, walking it forwards by the encodings and backwards by the back
// lengths, and checks the header, the end byte and the form of every element; edge values at
// every encoding and back-length boundary; the 65535 count rule; and a seeded random model test.

#include "core/listpack.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/string_number.h"

namespace goblin {
namespace {

// One decoded element: an integer, or a string.
struct Element {
  bool integer = false;
  int64_t value = 0;
  std::string text;
  int encoding_bytes = 0;  // first-byte form: bytes of encoding + data
  uint8_t first = 0;       // the first byte

  // What Redis's lpGet hands back as text.
  std::string Text() const { return integer ? Int64ToString(value) : text; }
};

uint64_t LittleEndian(std::string_view bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
  return v;
}

int64_t SignExtend(uint64_t v, int bits) {
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

// Decodes a whole listpack; nullopt with *why on any violation of the format.
std::optional<std::vector<Element>> Decode(std::string_view lp, std::string* why) {
  auto fail = [&](const std::string& what) {
    *why = what;
    return std::nullopt;
  };
  if (lp.size() < 7) return fail("shorter than a header and an end byte");
  if (LittleEndian(lp, 0, 4) != lp.size()) return fail("total bytes do not match");
  const uint64_t header_count = LittleEndian(lp, 4, 2);
  if (static_cast<uint8_t>(lp.back()) != 0xff) return fail("no end byte");
  std::vector<Element> elements;
  std::vector<size_t> starts;
  size_t p = 6;
  while (p < lp.size() - 1) {
    starts.push_back(p);
    Element e;
    const uint8_t b = static_cast<uint8_t>(lp[p]);
    e.first = b;
    size_t length = 0;  // string bytes
    size_t head = 0;    // encoding bytes before the string bytes
    if ((b & 0x80) == 0) {
      e.integer = true;
      e.value = b;
      e.encoding_bytes = 1;
    } else if ((b & 0xc0) == 0x80) {
      head = 1;
      length = b & 0x3f;
    } else if ((b & 0xe0) == 0xc0) {
      if (p + 2 > lp.size()) return fail("truncated 13-bit integer");
      e.integer = true;
      e.value = SignExtend((uint64_t{b & 0x1fu} << 8) | static_cast<uint8_t>(lp[p + 1]), 13);
      e.encoding_bytes = 2;
    } else if ((b & 0xf0) == 0xe0) {
      if (p + 2 > lp.size()) return fail("truncated 12-bit string length");
      head = 2;
      length = (size_t{b & 0x0fu} << 8) | static_cast<uint8_t>(lp[p + 1]);
    } else if (b == 0xf0) {
      if (p + 5 > lp.size()) return fail("truncated 32-bit string length");
      head = 5;
      length = LittleEndian(lp, p + 1, 4);
    } else if (b >= 0xf1 && b <= 0xf4) {
      const int width = b == 0xf1 ? 2 : b == 0xf2 ? 3 : b == 0xf3 ? 4 : 8;
      if (p + 1 + width > lp.size()) return fail("truncated integer");
      e.integer = true;
      e.value = SignExtend(LittleEndian(lp, p + 1, width), 8 * width);
      e.encoding_bytes = 1 + width;
    } else {
      return fail("unknown encoding byte " + std::to_string(b) + " at " + std::to_string(p));
    }
    if (!e.integer) {
      if (p + head + length > lp.size() - 1) return fail("string runs past the end");
      e.text.assign(lp.substr(p + head, length));
      e.encoding_bytes = static_cast<int>(head + length);
    }
    const size_t encoded = static_cast<size_t>(e.encoding_bytes);
    const size_t back = listpack::BackLengthSize(encoded);
    if (p + encoded + back > lp.size() - 1) return fail("back length runs past the end");
    // Redis reads the back length from its last byte backwards: 7 bits a byte, the top bit
    // saying that a byte before it belongs to it too.
    uint64_t value = 0;
    size_t q = p + encoded + back - 1;
    size_t used = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t c = static_cast<uint8_t>(lp[q]);
      value |= uint64_t{c & 0x7fu} << shift;
      ++used;
      if ((c & 0x80) == 0) break;
      if (used == 5 || q == p + encoded) return fail("back length does not end");
      --q;
    }
    if (used != back) return fail("back length of the wrong size at " + std::to_string(p));
    if (value != encoded) return fail("back length does not match at " + std::to_string(p));
    elements.push_back(e);
    p += encoded + back;
  }
  if (p != lp.size() - 1) return fail("elements overrun the end byte");
  const uint64_t expected = elements.size() < 65535 ? elements.size() : 65535;
  if (header_count != expected) return fail("header count " + std::to_string(header_count));
  // The backward walk lands on every element's start, as Redis's lpPrev does.
  size_t at = lp.size() - 1;
  for (size_t i = starts.size(); i-- > 0;) {
    uint64_t value = 0;
    size_t q = at - 1;
    for (int shift = 0;; shift += 7) {
      const uint8_t c = static_cast<uint8_t>(lp[q]);
      value |= uint64_t{c & 0x7fu} << shift;
      if ((c & 0x80) == 0) break;
      --q;
    }
    const size_t start = q - value;
    if (start != starts[i]) return fail("backward walk misses element " + std::to_string(i));
    at = start;
  }
  return elements;
}

std::vector<Element> MustDecode(std::string_view lp) {
  std::string why;
  auto elements = Decode(lp, &why);
  EXPECT_TRUE(elements.has_value()) << why;
  return elements.value_or(std::vector<Element>{});
}

// Writes one element as text and as an integer and checks both decode to it, with the
// encoding size Redis would pick and the size ElementSize predicts.
void CheckInteger(int64_t v, int expected_encoding_bytes) {
  SCOPED_TRACE(v);
  ListpackWriter text;
  text.AppendString(Int64ToString(v));
  ListpackWriter integer;
  integer.AppendInteger(v);
  EXPECT_EQ(text.Finish(), integer.Finish());
  const std::vector<Element> elements = MustDecode(integer.Finish());
  ASSERT_EQ(elements.size(), 1u);
  EXPECT_TRUE(elements[0].integer);
  EXPECT_EQ(elements[0].value, v);
  EXPECT_EQ(elements[0].encoding_bytes, expected_encoding_bytes);
  EXPECT_EQ(listpack::IntegerElementSize(v), integer.bytes() - 7);
  EXPECT_EQ(listpack::ElementSize(Int64ToString(v)), integer.bytes() - 7);
}

TEST(Listpack, IntegersTakeTheSmallestEncodingAtEveryBoundary) {
  CheckInteger(0, 1);
  CheckInteger(1, 1);
  CheckInteger(127, 1);
  CheckInteger(128, 2);
  CheckInteger(-1, 2);
  CheckInteger(4095, 2);
  CheckInteger(-4096, 2);
  CheckInteger(4096, 3);
  CheckInteger(-4097, 3);
  CheckInteger(32767, 3);
  CheckInteger(-32768, 3);
  CheckInteger(32768, 4);
  CheckInteger(-32769, 4);
  CheckInteger(8388607, 4);
  CheckInteger(-8388608, 4);
  CheckInteger(8388608, 5);
  CheckInteger(-8388609, 5);
  CheckInteger(std::numeric_limits<int32_t>::max(), 5);
  CheckInteger(std::numeric_limits<int32_t>::min(), 5);
  CheckInteger(int64_t{std::numeric_limits<int32_t>::max()} + 1, 9);
  CheckInteger(int64_t{std::numeric_limits<int32_t>::min()} - 1, 9);
  CheckInteger(std::numeric_limits<int64_t>::max(), 9);
  CheckInteger(std::numeric_limits<int64_t>::min(), 9);
}

TEST(Listpack, FirstBytesAreRedisEncodings) {
  ListpackWriter lp;
  lp.AppendInteger(5);
  lp.AppendInteger(-1);
  lp.AppendInteger(300);
  lp.AppendString("ab");
  lp.AppendString(std::string(100, 'x'));
  lp.AppendString(std::string(5000, 'y'));
  lp.AppendInteger(40000);
  lp.AppendInteger(-9000000);
  lp.AppendInteger(int64_t{1} << 40);
  const std::vector<Element> e = MustDecode(lp.Finish());
  ASSERT_EQ(e.size(), 9u);
  EXPECT_EQ(e[0].first, 0x05);
  EXPECT_EQ(e[1].first, 0xdf);  // 110 11111: -1 in 13 bits
  EXPECT_EQ(e[2].first, 0xc1);  // 300 = 0x12c
  EXPECT_EQ(e[3].first, 0x82);
  EXPECT_EQ(e[4].first, 0xe0);  // 100 = 0x064
  EXPECT_EQ(e[5].first, 0xf0);
  EXPECT_EQ(e[6].first, 0xf2);  // 40000 needs 24 bits
  EXPECT_EQ(e[7].first, 0xf3);
  EXPECT_EQ(e[8].first, 0xf4);
  EXPECT_EQ(e[4].text, std::string(100, 'x'));
  EXPECT_EQ(e[5].text, std::string(5000, 'y'));
}

TEST(Listpack, OnlyCanonicalIntegerTextBecomesAnInteger) {
  const std::vector<std::string> strings = {"",
                                            "007",
                                            "-0",
                                            "+1",
                                            " 1",
                                            "1 ",
                                            "1e3",
                                            "0x10",
                                            "1.0",
                                            "--1",
                                            "9223372036854775808",
                                            "-9223372036854775809",
                                            "00",
                                            "-",
                                            "abc"};
  ListpackWriter lp;
  for (const std::string& s : strings) lp.AppendString(s);
  lp.AppendString("-9223372036854775808");
  lp.AppendString("0");
  const std::vector<Element> e = MustDecode(lp.Finish());
  ASSERT_EQ(e.size(), strings.size() + 2);
  for (size_t i = 0; i < strings.size(); ++i) {
    EXPECT_FALSE(e[i].integer) << strings[i];
    EXPECT_EQ(e[i].text, strings[i]);
    EXPECT_EQ(listpack::ElementSize(strings[i]),
              static_cast<size_t>(e[i].encoding_bytes) +
                  listpack::BackLengthSize(static_cast<size_t>(e[i].encoding_bytes)));
  }
  EXPECT_TRUE(e[strings.size()].integer);
  EXPECT_EQ(e[strings.size()].value, std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(e[strings.size() + 1].integer);
}

TEST(Listpack, StringsAtEveryLengthAndBackLengthBoundary) {
  // String lengths at the 6/12/32-bit length forms, and at the back-length sizes: an element of
  // 127 encoded bytes has a 1-byte back length, 128 a 2-byte one; 16382 takes 2 bytes, 16383
  // takes 3 (Redis's bound is exclusive there); 2097150 takes 3, 2097151 takes 4.
  const std::vector<size_t> lengths = {0,    1,     63,    64,      125,     126,   4095,
                                       4096, 16377, 16378, 2097145, 2097146, 100000};
  ListpackWriter lp;
  for (size_t length : lengths) lp.AppendString(std::string(length, 'a' + length % 26));
  const std::vector<Element> e = MustDecode(lp.Finish());
  ASSERT_EQ(e.size(), lengths.size());
  const std::vector<size_t> back_lengths = {1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4, 3};
  for (size_t i = 0; i < lengths.size(); ++i) {
    SCOPED_TRACE(lengths[i]);
    EXPECT_FALSE(e[i].integer);
    EXPECT_EQ(e[i].text.size(), lengths[i]);
    EXPECT_EQ(listpack::BackLengthSize(static_cast<size_t>(e[i].encoding_bytes)), back_lengths[i]);
  }
  EXPECT_EQ(listpack::BackLengthSize(127), 1u);
  EXPECT_EQ(listpack::BackLengthSize(128), 2u);
  EXPECT_EQ(listpack::BackLengthSize(16382), 2u);
  EXPECT_EQ(listpack::BackLengthSize(16383), 3u);
  EXPECT_EQ(listpack::BackLengthSize(2097150), 3u);
  EXPECT_EQ(listpack::BackLengthSize(2097151), 4u);
  EXPECT_EQ(listpack::BackLengthSize(268435454), 4u);
  EXPECT_EQ(listpack::BackLengthSize(268435455), 5u);
}

TEST(Listpack, CountSaturatesAt65535) {
  for (size_t n : {65534u, 65535u, 70000u}) {
    SCOPED_TRACE(n);
    ListpackWriter lp;
    for (size_t i = 0; i < n; ++i) lp.AppendInteger(static_cast<int64_t>(i % 200));
    const std::string_view bytes = lp.Finish();
    EXPECT_EQ(LittleEndian(bytes, 4, 2), n < 65535 ? n : 65535);
    EXPECT_EQ(MustDecode(bytes).size(), n);
    EXPECT_EQ(lp.count(), n);
  }
}

TEST(Listpack, EmptyListpackIsSevenBytes) {
  ListpackWriter lp;
  EXPECT_EQ(lp.bytes(), 7u);
  EXPECT_EQ(lp.Finish(), std::string_view("\x07\x00\x00\x00\x00\x00\xff", 7));
  EXPECT_TRUE(MustDecode(lp.Finish()).empty());
}

TEST(Listpack, AppendAfterFinishAndAppendElementsContinueTheListpack) {
  ListpackWriter head;
  head.AppendString("a");
  head.Finish();
  head.AppendInteger(7);
  ListpackWriter tail;
  tail.AppendString("tail");
  tail.Finish();
  head.AppendElements(tail);
  EXPECT_EQ(head.count(), 3u);
  const std::vector<Element> e = MustDecode(head.Finish());
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].text, "a");
  EXPECT_EQ(e[1].value, 7);
  EXPECT_EQ(e[2].text, "tail");
  EXPECT_EQ(head.bytes(), head.Finish().size());
}

// Seeded random sequences of appends (integers near every boundary, integer-looking text,
// strings of every length form), checked against a plain vector after every step, and the
// sizer against the writer.
TEST(Listpack, RandomAppendsMatchModel) {
  std::mt19937_64 rng(20240229);
  const std::vector<int64_t> edges = {0,        127,       128,       4095,      4096,     -4096,
                                      -4097,    32767,     32768,     -32768,    8388607,  8388608,
                                      -8388609, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
  for (int round = 0; round < 40; ++round) {
    ListpackWriter lp;
    ListpackSizer sizer;
    std::vector<std::string> model;
    const int steps = 1 + static_cast<int>(rng() % 300);
    for (int step = 0; step < steps; ++step) {
      std::string text;
      switch (rng() % 5) {
        case 0: {
          // An edge, one below or one above it (wrapping past INT64_MAX / INT64_MIN).
          const uint64_t edge = static_cast<uint64_t>(edges[rng() % edges.size()]);
          const int64_t v = static_cast<int64_t>(edge + rng() % 3 - 1);
          lp.AppendInteger(v);
          sizer.AppendInteger(v);
          model.push_back(Int64ToString(v));
          continue;
        }
        case 1:
          text = Int64ToString(static_cast<int64_t>(rng()));
          break;
        case 2:
          text = std::string(rng() % 70, 'x');
          break;
        case 3:
          text = std::string(rng() % 5000, 'y');
          break;
        default:
          text = "0" + std::to_string(rng() % 100);
          break;
      }
      lp.AppendString(text);
      sizer.AppendString(text);
      model.push_back(text);
      if (rng() % 8 == 0) {
        const std::vector<Element> e = MustDecode(lp.Finish());
        ASSERT_EQ(e.size(), model.size());
        for (size_t i = 0; i < e.size(); ++i) ASSERT_EQ(e[i].Text(), model[i]) << i;
      }
      ASSERT_EQ(sizer.bytes(), lp.bytes());
      ASSERT_EQ(sizer.count(), lp.count());
    }
    const std::vector<Element> e = MustDecode(lp.Finish());
    ASSERT_EQ(e.size(), model.size());
    for (size_t i = 0; i < e.size(); ++i) ASSERT_EQ(e[i].Text(), model[i]) << i;
  }
}

}  // namespace
}  // namespace goblin
