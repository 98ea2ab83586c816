// core/bitfield.h against a model kept as one std::vector<bool> per bit, whose field values are
// computed bit by bit in 128-bit integers (wrapping by modular arithmetic, not by masks), and
// against answers redis-server gave for the same BITFIELD calls.
#include "core/bitfield.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace goblin::bitfield {
namespace {

using Int = __int128;

constexpr FieldType U(int bits) { return FieldType{.is_signed = false, .bits = bits}; }
constexpr FieldType I(int bits) { return FieldType{.is_signed = true, .bits = bits}; }

Int Power(int bits) { return Int{1} << bits; }
Int MaxOf(FieldType t) { return t.is_signed ? Power(t.bits - 1) - 1 : Power(t.bits) - 1; }
Int MinOf(FieldType t) { return t.is_signed ? -Power(t.bits - 1) : 0; }

// The value congruent to x modulo 2^bits within the type's range.
Int WrapInto(FieldType t, Int x) {
  const Int span = Power(t.bits);
  Int r = (x - MinOf(t)) % span;
  if (r < 0) r += span;
  return r + MinOf(t);
}

// The model: the string as bits, field values as exact integers.
struct BitModel {
  std::vector<bool> bits;

  void GrowTo(uint64_t bit_count) {
    if (bits.size() < bit_count) bits.resize((bit_count + 7) / 8 * 8, false);
  }
  Int Get(uint64_t offset, FieldType t) const {
    Int value = 0;
    for (int k = 0; k < t.bits; ++k) {
      const uint64_t at = offset + static_cast<uint64_t>(k);
      value = value * 2 + (at < bits.size() && bits[at] ? 1 : 0);
    }
    if (t.is_signed && value > MaxOf(t)) value -= Power(t.bits);
    return value;
  }
  void Put(uint64_t offset, FieldType t, Int value) {
    Int pattern = value < 0 ? value + Power(t.bits) : value;
    for (int k = t.bits - 1; k >= 0; --k) {
      bits[offset + static_cast<uint64_t>(k)] = (pattern % 2) == 1;
      pattern /= 2;
    }
  }
  std::string Bytes() const {
    std::string out(bits.size() / 8, '\0');
    for (size_t i = 0; i < bits.size(); ++i) {
      if (bits[i]) out[i / 8] = static_cast<char>(out[i / 8] | (0x80 >> (i % 8)));
    }
    return out;
  }
};

// What SET stores under the model's reading of Redis's checks (bitfield.h rule 4); nullopt for
// a FAIL.
std::optional<Int> ModelSet(FieldType t, int64_t value, Overflow mode) {
  bool above, below;
  if (!t.is_signed) {
    const Int as_unsigned = value < 0 ? Int{value} + Power(64) : Int{value};
    above = as_unsigned > MaxOf(t);
    below = false;
  } else if (t.bits == 64) {
    above = below = false;
  } else {
    above = value > MaxOf(t) || MaxOf(t) - value > Int{INT64_MAX};
    below = !above && value < MinOf(t);
  }
  if (!above && !below) return Int{value};
  if (mode == Overflow::kFail) return std::nullopt;
  if (mode == Overflow::kSat) return above ? MaxOf(t) : MinOf(t);
  return WrapInto(t, value);
}

std::optional<Int> ModelIncrement(FieldType t, Int old, int64_t increment, Overflow mode) {
  const Int sum = old + increment;
  if (sum >= MinOf(t) && sum <= MaxOf(t)) return sum;
  if (mode == Overflow::kFail) return std::nullopt;
  if (mode == Overflow::kSat) return sum > MaxOf(t) ? MaxOf(t) : MinOf(t);
  return WrapInto(t, sum);
}

int64_t Clamp64(Int x) {
  return static_cast<int64_t>(x > Int{INT64_MAX}   ? Int{INT64_MAX}
                              : x < Int{INT64_MIN} ? Int{INT64_MIN}
                                                   : x);
}

// Values near the type's bounds, the int64 extremes, and arbitrary ones.
int64_t Draw(std::mt19937_64& rng, FieldType t) {
  const Int delta = static_cast<Int>(rng() % 5) - 2;
  switch (rng() % 8) {
    case 0:
      return Clamp64(MaxOf(t) + delta);
    case 1:
      return Clamp64(MinOf(t) + delta);
    case 2:
      return static_cast<int64_t>(rng() % 7) - 3;
    case 3:
      return Clamp64(rng() % 2 ? Int{INT64_MAX} - (delta + 2) : Int{INT64_MIN} + (delta + 2));
    case 4:
      return Clamp64(rng() % 2 ? MaxOf(t) + 1 : MinOf(t) - 1);
    case 5:
      return static_cast<int64_t>(rng()) >> (rng() % 64);
    default:
      return static_cast<int64_t>(rng());
  }
}

FieldType DrawType(std::mt19937_64& rng) {
  if (rng() % 2) return I(1 + static_cast<int>(rng() % 64));
  return U(1 + static_cast<int>(rng() % 63));
}

TEST(BitfieldTest, RandomOperationsMatchTheBitModel) {
  for (uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    std::mt19937_64 rng(seed);
    BitModel model;
    std::string bytes;
    for (int step = 0; step < 20000; ++step) {
      const FieldType t = DrawType(rng);
      const uint64_t offset = rng() % (8 * bytes.size() + 80);
      const auto mode = static_cast<Overflow>(rng() % 3);
      const int op = static_cast<int>(rng() % 3);
      auto* data = reinterpret_cast<uint8_t*>(bytes.data());
      const int64_t old = Get(data, bytes.size(), offset, t);
      ASSERT_EQ(Int{old}, model.Get(offset, t)) << "seed " << seed << " step " << step;
      if (op == 0) continue;  // GET: nothing grows
      // A write grows both strings to the field's last byte first, as BITFIELD does.
      const uint64_t end_bit = offset + static_cast<uint64_t>(t.bits);
      if (bytes.size() < (end_bit + 7) / 8) bytes.resize((end_bit + 7) / 8, '\0');
      model.GrowTo(end_bit);
      data = reinterpret_cast<uint8_t*>(bytes.data());
      const int64_t argument = Draw(rng, t);
      const Outcome got =
          op == 1 ? ForSet(t, argument, mode) : ForIncrement(t, old, argument, mode);
      const std::optional<Int> want =
          op == 1 ? ModelSet(t, argument, mode) : ModelIncrement(t, Int{old}, argument, mode);
      ASSERT_EQ(got.failed, !want.has_value())
          << "seed " << seed << " step " << step << " op " << op << " bits " << t.bits
          << (t.is_signed ? " signed" : " unsigned") << " arg " << argument << " old " << old;
      if (!want) continue;
      ASSERT_EQ(Int{got.value}, *want) << "seed " << seed << " step " << step << " op " << op
                                       << " bits " << t.bits << " arg " << argument;
      Put(data, offset, t, got.value);
      model.Put(offset, t, *want);
      ASSERT_EQ(bytes, model.Bytes()) << "seed " << seed << " step " << step;
    }
  }
}

TEST(BitfieldTest, EveryWidthAtEveryBitPositionRoundTrips) {
  std::mt19937_64 rng(9);
  for (int bits = 1; bits <= 64; ++bits) {
    for (const bool is_signed : {false, true}) {
      if (!is_signed && bits == 64) continue;
      const FieldType t{.is_signed = is_signed, .bits = bits};
      for (uint64_t offset = 0; offset < 16; ++offset) {
        std::string bytes(12, '\0');
        for (char& c : bytes) c = static_cast<char>(rng());
        const std::string before = bytes;
        const int64_t value = static_cast<int64_t>(WrapInto(t, static_cast<int64_t>(rng())));
        Put(reinterpret_cast<uint8_t*>(bytes.data()), offset, t, value);
        EXPECT_EQ(Get(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), offset, t),
                  value)
            << bits << " at " << offset;
        // Bits outside the field are untouched.
        for (uint64_t bit = 0; bit < 96; ++bit) {
          if (bit >= offset && bit < offset + static_cast<uint64_t>(bits)) continue;
          const int mask = 0x80 >> (bit % 8);
          EXPECT_EQ(bytes[bit / 8] & mask, before[bit / 8] & mask) << bits << " bit " << bit;
        }
      }
    }
  }
}

TEST(BitfieldTest, ReadsPastTheEndAsZeros) {
  const uint8_t bytes[] = {0xff, 0x80};
  EXPECT_EQ(Get(bytes, 2, 0, U(16)), 0xff80);
  EXPECT_EQ(Get(bytes, 2, 8, U(16)), 0x8000);
  EXPECT_EQ(Get(bytes, 2, 9, U(8)), 0);
  EXPECT_EQ(Get(bytes, 2, 4, I(8)), -8);  // 1111 1000
  EXPECT_EQ(Get(bytes, 2, 1000, I(64)), 0);
  EXPECT_EQ(Get(nullptr, 0, 0, I(64)), 0);
  EXPECT_EQ(Get(bytes, 2, 0, I(64)), static_cast<int64_t>(0xff80000000000000ULL));
}

TEST(BitfieldTest, LayoutOfTheHeaderExample) {
  uint8_t bytes[2] = {0, 0};
  Put(bytes, 7, U(5), 23);
  EXPECT_EQ(bytes[0], 0x01);
  EXPECT_EQ(bytes[1], 0x70);
}

// Answers redis-server 7.0.15 gave (BITFIELD k OVERFLOW <mode> SET <type> 0 <value>, then GET).
TEST(BitfieldTest, SetFollowsRedisChecksAtTheEdges) {
  const struct {
    FieldType type;
    int64_t value;
    Overflow mode;
    bool failed;
    int64_t stored;
  } cases[] = {
      {I(8), INT64_MIN, Overflow::kSat, false, 127},
      {I(8), INT64_MIN + 127, Overflow::kSat, false, 127},
      {I(8), INT64_MIN + 128, Overflow::kSat, false, -128},
      {I(8), -129, Overflow::kSat, false, -128},
      {I(8), 128, Overflow::kSat, false, 127},
      {I(8), 128, Overflow::kWrap, false, -128},
      {I(8), -129, Overflow::kWrap, false, 127},
      {I(8), INT64_MIN, Overflow::kWrap, false, 0},
      {I(8), 127, Overflow::kFail, false, 127},
      {I(8), 128, Overflow::kFail, true, 0},
      {U(8), -1, Overflow::kSat, false, 255},
      {U(8), -1, Overflow::kWrap, false, 255},
      {U(8), -256, Overflow::kWrap, false, 0},
      {U(8), 256, Overflow::kSat, false, 255},
      {U(8), -1, Overflow::kFail, true, 0},
      {U(63), INT64_MAX, Overflow::kFail, false, INT64_MAX},
      {U(63), -1, Overflow::kSat, false, INT64_MAX},
      {I(64), INT64_MIN, Overflow::kFail, false, INT64_MIN},
      {I(63), -(int64_t{1} << 62) - 1, Overflow::kSat, false, (int64_t{1} << 62) - 1},
      {I(1), -1, Overflow::kFail, false, -1},
      {I(1), 1, Overflow::kSat, false, 0},
      {U(1), 2, Overflow::kWrap, false, 0},
  };
  for (const auto& c : cases) {
    const Outcome got = ForSet(c.type, c.value, c.mode);
    EXPECT_EQ(got.failed, c.failed) << c.type.bits << " " << c.value;
    if (!c.failed) {
      EXPECT_EQ(got.value, c.stored) << c.type.bits << " " << c.value;
    }
  }
}

// INCRBY after a SET of the old value: redis-server 7.0.15 gave the same answers.
TEST(BitfieldTest, IncrementOverflowsByExactArithmetic) {
  EXPECT_EQ(ForIncrement(I(64), INT64_MAX, 1, Overflow::kWrap).value, INT64_MIN);
  EXPECT_EQ(ForIncrement(I(64), INT64_MAX, 1, Overflow::kSat).value, INT64_MAX);
  EXPECT_TRUE(ForIncrement(I(64), INT64_MAX, 1, Overflow::kFail).failed);
  EXPECT_EQ(ForIncrement(I(64), INT64_MIN, -1, Overflow::kSat).value, INT64_MIN);
  EXPECT_EQ(ForIncrement(I(64), -1, INT64_MIN, Overflow::kWrap).value, INT64_MAX);
  EXPECT_EQ(ForIncrement(I(64), 5, INT64_MIN, Overflow::kFail).value, INT64_MIN + 5);
  EXPECT_EQ(ForIncrement(U(63), 0, -1, Overflow::kWrap).value, INT64_MAX);
  EXPECT_EQ(ForIncrement(U(63), INT64_MAX, INT64_MAX, Overflow::kSat).value, INT64_MAX);
  EXPECT_EQ(ForIncrement(U(63), INT64_MAX, INT64_MIN, Overflow::kSat).value, 0);
  EXPECT_EQ(ForIncrement(U(8), 250, 10, Overflow::kWrap).value, 4);
  EXPECT_EQ(ForIncrement(U(8), 5, -10, Overflow::kWrap).value, 251);
  EXPECT_EQ(ForIncrement(U(8), 5, -10, Overflow::kSat).value, 0);
  EXPECT_EQ(ForIncrement(I(4), 7, 1, Overflow::kWrap).value, -8);
  EXPECT_EQ(ForIncrement(I(4), -8, -17, Overflow::kWrap).value, 7);
}

TEST(BitfieldTest, ParsesTheTypesRedisAccepts) {
  FieldType t;
  ASSERT_TRUE(ParseType("i64", &t));
  EXPECT_TRUE(t.is_signed);
  EXPECT_EQ(t.bits, 64);
  ASSERT_TRUE(ParseType("u63", &t));
  EXPECT_FALSE(t.is_signed);
  EXPECT_EQ(t.bits, 63);
  ASSERT_TRUE(ParseType("u1", &t));
  ASSERT_TRUE(ParseType(std::string_view("i8\0xyz", 6), &t));  // Redis reads up to the NUL
  EXPECT_EQ(t.bits, 8);
  for (std::string_view bad : {"u64", "i65", "i0", "u0", "I8", "U8", "i", "", "8", "i-1", "i08",
                               "i+8", "i 8", "x8", "i8 ", "i1.0"}) {
    EXPECT_FALSE(ParseType(bad, &t)) << bad;
  }
}

}  // namespace
}  // namespace goblin::bitfield
