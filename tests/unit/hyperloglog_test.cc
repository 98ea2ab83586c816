// Tests of goblin::hll, the HyperLogLog in Redis's byte format: values read off redis-server
// (element placement, the bytes of a small sparse value, estimates), a seeded model test of
// the registers against a plain std::vector<uint8_t> of 16384 registers through random raises,
// sparse-to-dense promotion at several sparse limits and merges, and corrupt sparse codes.
// Registers are read back with a decoder written here, independently of the code under test.

#include "core/hyperloglog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/murmur_hash.h"

namespace goblin {
namespace {

using hll::kRegisters;
using Registers = std::vector<uint8_t>;

std::string Hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

// The registers of a value, decoded here from the format's description; nullopt when a sparse
// code does not cover exactly 16384 registers.
std::optional<Registers> Decode(const std::string& value) {
  Registers out(kRegisters, 0);
  const auto* p = reinterpret_cast<const uint8_t*>(value.data()) + 16;
  const size_t size = value.size() - 16;
  if (value[4] == 0) {
    for (size_t i = 0; i < kRegisters; ++i) {
      unsigned v = 0;
      for (int bit = 0; bit < 6; ++bit) {
        const size_t at = i * 6 + static_cast<size_t>(bit);
        v |= ((p[at / 8] >> (at % 8)) & 1u) << bit;
      }
      out[i] = static_cast<uint8_t>(v);
    }
    return out;
  }
  size_t reg = 0;
  for (size_t i = 0; i < size;) {
    const uint8_t op = p[i];
    size_t run;
    uint8_t v = 0;
    if ((op & 0xc0) == 0) {
      run = (op & 0x3f) + 1u;
      i += 1;
    } else if ((op & 0xc0) == 0x40) {
      const unsigned low = i + 1 < size ? p[i + 1] : 0;  // a missing second byte reads as 0
      run = ((op & 0x3fu) << 8 | low) + 1;
      i += 2;
    } else {
      run = (op & 3u) + 1;
      v = static_cast<uint8_t>(((op >> 2) & 0x1f) + 1);
      i += 1;
    }
    if (reg + run > kRegisters) return std::nullopt;
    std::fill(out.begin() + static_cast<long>(reg), out.begin() + static_cast<long>(reg + run), v);
    reg += run;
  }
  if (reg != kRegisters) return std::nullopt;
  return out;
}

uint64_t EstimateOf(const Registers& registers) {
  hll::Histogram histogram{};
  hll::ByteHistogram(registers.data(), &histogram);
  return hll::Estimate(histogram);
}

std::string Sparse(std::string_view opcodes_hex) {
  return std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0", 16) + Unhex(opcodes_hex);
}

// Where redis-server 7.0.15 put these elements (PFADD to an empty key, PFDEBUG GETREG).
TEST(HyperLogLogTest, ElementsLandWhereRedisPutsThem) {
  const struct {
    std::string element;
    uint32_t index;
    uint8_t count;
  } cases[] = {{"", 5938, 2},
               {"a", 12711, 2},
               {"hello", 9216, 1},
               {"foo", 7348, 5},
               {"bar", 10007, 1},
               {"Hello World", 7641, 1},
               {"xxxxxxxx", 5076, 2},
               {"12345678", 10579, 3},
               {"123456789", 9293, 2},
               {std::string("\0\xff", 2), 3937, 1},
               {"abcdefghijklmnopq", 4271, 1},
               {"big:3244251397", 11247, 35}};
  for (const auto& c : cases) {
    const hll::Pattern p = hll::PatternOf(c.element);
    EXPECT_EQ(p.index, c.index) << Hex(c.element);
    EXPECT_EQ(p.count, c.count) << Hex(c.element);
    EXPECT_EQ(MurmurHash64A(c.element, hll::kHashSeed) & 16383, c.index);
  }
}

TEST(HyperLogLogTest, NewValueAndFiveElementsAreRedisBytes) {
  std::string value = hll::NewSparse();
  EXPECT_EQ(Hex(value),
            "48594c4c01000000000000000000000"
            "07fff");
  EXPECT_TRUE(hll::IsHyperLogLog(value));
  for (const char* e : {"a", "b", "c", "d", "e"}) {
    const hll::Pattern p = hll::PatternOf(e);
    EXPECT_EQ(hll::Raise(&value, p.index, p.count, 3000), hll::RaiseResult::kRaised);
  }
  hll::InvalidateCache(reinterpret_cast<uint8_t*>(value.data()));
  // PFADD s a b c d e on redis-server, then GET s.
  EXPECT_EQ(Hex(value), "48594c4c0100000000000000000000805c7b8044768050b184498c80426d80425a");
  EXPECT_EQ(hll::Count(value), 5u);
  auto* header = reinterpret_cast<uint8_t*>(value.data());
  EXPECT_FALSE(hll::CacheValid(header));
  hll::StoreCardinality(header, 5);
  EXPECT_TRUE(hll::CacheValid(header));
  EXPECT_EQ(hll::CachedCardinality(header), 5u);
  EXPECT_EQ(Hex(value), "48594c4c0100000005000000000000005c7b8044768050b184498c80426d80425a");
}

// PFADD x e:0 ... e:119 on redis-server, then GET x: the code Redis's edits build, byte for byte.
TEST(HyperLogLogTest, A120ElementCodeIsRedisBytes) {
  std::string value = hll::NewSparse();
  for (int i = 0; i < 120; ++i) {
    const hll::Pattern p = hll::PatternOf("e:" + std::to_string(i));
    hll::Raise(&value, p.index, p.count, 3000);
  }
  EXPECT_EQ(Hex(value),
            "48594c4c01000000000000000000008040a2842a84406780405d842980422398405380413384248c4049"
            "8c41b0842b801184008440ea890280407e80411a802980404b842d8041568040c980404f8c1788238040"
            "6e8040d7802580405588404d84099041e080409284158423841d80410980048040ba8c2a80405180427a"
            "80404e802180404b800284158040c084405d804074801180409880411d80404d8840728440848440488040"
            "aa882c884172902c8c417d840a8022882484407f8040808840b2802e848c412c84338442d0800a80328040"
            "8e8440e78040db8040e68040b08040fd8041a294298040cf804040840e801e8003801780408a8040ff8041"
            "409007840784406a8043158840688403804076880480405b8440a780404a8440af9040428040bd80406f80"
            "0e80413680407b84248041028840b6840080188436883a843c8040ad");
}

// PFADD of e:0 .. e:n-1 (1000 per command), then PFCOUNT, on redis-server.
TEST(HyperLogLogTest, EstimatesAreRedisCounts) {
  const struct {
    int n;
    uint64_t count;
    uint8_t encoding;
  } cases[] = {{1, 1, hll::kSparse},           {10, 10, hll::kSparse},
               {100, 100, hll::kSparse},       {1000, 995, hll::kSparse},
               {10000, 10077, hll::kDense},    {100000, 100342, hll::kDense},
               {1000000, 1004277, hll::kDense}};
  for (const auto& c : cases) {
    std::string value = hll::NewSparse();
    for (int i = 0; i < c.n; ++i) {
      const hll::Pattern p = hll::PatternOf("e:" + std::to_string(i));
      ASSERT_NE(hll::Raise(&value, p.index, p.count, 3000), hll::RaiseResult::kCorrupt);
    }
    EXPECT_EQ(hll::Count(value), c.count) << c.n;
    EXPECT_EQ(hll::EncodingOf(value), c.encoding) << c.n;
  }
  Registers empty(kRegisters, 0);
  EXPECT_EQ(EstimateOf(empty), 0u);
}

// A run above 32 fits no VAL: the value turns dense at once, header kept (found by search;
// redis-server's PFADD gives the same register and a dense value).
TEST(HyperLogLogTest, ARunAbove32TurnsTheValueDense) {
  std::string value = hll::NewSparse();
  const hll::Pattern p = hll::PatternOf("big:3244251397");
  EXPECT_EQ(hll::Raise(&value, p.index, p.count, 3000), hll::RaiseResult::kRaised);
  EXPECT_EQ(hll::EncodingOf(value), hll::kDense);
  const std::optional<Registers> registers = Decode(value);
  ASSERT_TRUE(registers.has_value());
  EXPECT_EQ((*registers)[11247], 35);
  EXPECT_EQ(std::count(registers->begin(), registers->end(), 0), 16383);
}

TEST(HyperLogLogTest, HeaderChecks) {
  const std::string dense = std::string("HYLL", 4) + std::string(12300, '\0');
  EXPECT_TRUE(hll::IsHyperLogLog(dense));
  EXPECT_FALSE(hll::IsHyperLogLog(dense + "x"));
  EXPECT_FALSE(hll::IsHyperLogLog(dense.substr(0, 16)));
  std::string sparse = hll::NewSparse();
  EXPECT_TRUE(hll::IsHyperLogLog(sparse.substr(0, 16)));  // checked only when read
  sparse[4] = 2;
  EXPECT_FALSE(hll::IsHyperLogLog(sparse));
  EXPECT_FALSE(hll::IsHyperLogLog("HYLL"));
  EXPECT_FALSE(hll::IsHyperLogLog(std::string("HYLX\x01", 5) + std::string(11, '\0')));
}

TEST(HyperLogLogTest, DenseRegistersKeepTheirNeighbours) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> bytes(hll::kDenseRegisterBytes, 0);
  Registers model(kRegisters, 0);
  for (int step = 0; step < 200000; ++step) {
    const size_t i = rng() % kRegisters;
    const auto v = static_cast<uint8_t>(rng() % 64);
    hll::SetDenseRegister(bytes.data(), i, v);
    model[i] = v;
    for (size_t j = i > 2 ? i - 2 : 0; j < std::min(kRegisters, i + 3); ++j) {
      ASSERT_EQ(hll::DenseRegister(bytes.data(), j), model[j]) << step << " " << j;
    }
  }
  std::string value =
      std::string("HYLL\0\0\0\0\0\0\0\0\0\0\0\0", 16) + std::string(bytes.begin(), bytes.end());
  EXPECT_EQ(Decode(value), model);
}

// Random raises, mostly small counts as real hashes give, and now and then one above what a
// sparse VAL holds; checked against the model after each step. Returns the longest sparse
// value seen and whether the value ended dense.
struct ModelRun {
  size_t longest_sparse = 0;
  bool ended_dense = false;
};
ModelRun RunModel(uint64_t seed, size_t sparse_max_bytes, int steps, uint64_t big_count_every) {
  ModelRun run;
  std::mt19937_64 rng(seed);
  std::string value = hll::NewSparse();
  Registers model(kRegisters, 0);
  bool must_be_dense = false;
  for (int step = 0; step < steps; ++step) {
    const size_t index = rng() % (rng() % 4 == 0 ? 64 : kRegisters);  // some crowding
    uint8_t count = static_cast<uint8_t>(std::countr_zero(rng() | (uint64_t{1} << 20)) + 1);
    if (big_count_every != 0 && rng() % big_count_every == 0)
      count = static_cast<uint8_t>(33 + rng() % 19);
    const bool grows = count > model[index];
    const hll::RaiseResult result = hll::Raise(&value, index, count, sparse_max_bytes);
    EXPECT_EQ(result, grows ? hll::RaiseResult::kRaised : hll::RaiseResult::kUnchanged) << step;
    if (grows) model[index] = count;
    if (grows && count > 32) must_be_dense = true;
    const uint8_t encoding = hll::EncodingOf(value);
    if (must_be_dense) {
      EXPECT_EQ(encoding, hll::kDense) << step;
    }
    if (encoding == hll::kDense) {
      must_be_dense = true;  // never back
      EXPECT_EQ(value.size(), hll::kDenseBytes);
    } else {
      EXPECT_LE(value.size(), std::max<size_t>(sparse_max_bytes, 18)) << step;
      run.longest_sparse = std::max(run.longest_sparse, value.size());
    }
    EXPECT_TRUE(hll::IsHyperLogLog(value));
    if (::testing::Test::HasFailure()) return run;
    if (step % 97 == 0 || step + 1 == steps) {
      const std::optional<Registers> decoded = Decode(value);
      EXPECT_TRUE(decoded.has_value()) << step;
      if (!decoded) return run;
      EXPECT_EQ(*decoded, model) << step;
      EXPECT_EQ(hll::Count(value), EstimateOf(model)) << step;
      Registers merged(kRegisters, 0);
      EXPECT_TRUE(hll::MergeInto(value, merged.data()));
      EXPECT_EQ(merged, model);
      if (::testing::Test::HasFailure()) return run;
    }
  }
  run.ended_dense = hll::EncodingOf(value) == hll::kDense;
  return run;
}

TEST(HyperLogLogTest, ModelAtTheDefaultSparseLimit) {
  const ModelRun run = RunModel(1, 3000, 20000, 0);
  EXPECT_TRUE(run.ended_dense);
  EXPECT_GT(run.longest_sparse, 2990u);  // promoted at the limit, not before
}
TEST(HyperLogLogTest, ModelWithASmallSparseLimit) {
  const ModelRun run = RunModel(2, 100, 5000, 0);
  EXPECT_TRUE(run.ended_dense);
  EXPECT_GT(run.longest_sparse, 95u);
}
TEST(HyperLogLogTest, ModelThatStaysSparseLong) {
  const ModelRun run = RunModel(3, 20000, 12000, 0);
  EXPECT_FALSE(run.ended_dense);
  EXPECT_GT(run.longest_sparse, 5000u);
}
TEST(HyperLogLogTest, ModelWithNoRoomToGrow) {
  const ModelRun run = RunModel(4, 0, 300, 0);
  EXPECT_TRUE(run.ended_dense);
  EXPECT_EQ(run.longest_sparse, 0u);  // the first raise splits the XZERO: longer, so dense
}
TEST(HyperLogLogTest, ModelWithLargeCounts) {
  int dense = 0;
  for (uint64_t seed = 10; seed < 30; ++seed) dense += RunModel(seed, 3000, 3000, 500).ended_dense;
  EXPECT_EQ(dense, 20);
}

TEST(HyperLogLogTest, SparseToDenseKeepsRegistersAndHeader) {
  std::mt19937_64 rng(11);
  std::string value = hll::NewSparse();
  value[5] = 'u';  // the unused bytes travel with the value
  value[8] = 42;
  Registers model(kRegisters, 0);
  for (int i = 0; i < 300; ++i) {
    const size_t index = rng() % kRegisters;
    const auto count = static_cast<uint8_t>(1 + rng() % 32);
    hll::Raise(&value, index, count, 100000);
    model[index] = std::max(model[index], count);
  }
  ASSERT_EQ(hll::EncodingOf(value), hll::kSparse);
  const std::string header = value.substr(0, 16);
  ASSERT_TRUE(hll::SparseToDense(&value));
  EXPECT_EQ(value.size(), hll::kDenseBytes);
  EXPECT_EQ(value[4], 0);
  EXPECT_EQ(value.substr(5, 11), header.substr(5, 11));
  EXPECT_EQ(Decode(value), model);
}

TEST(HyperLogLogTest, MergesAreRegisterMaxima) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 20; ++round) {
    Registers expected(kRegisters, 0);
    Registers merged(kRegisters, 0);
    for (int input = 0; input < 3; ++input) {
      std::string value = hll::NewSparse();
      const int adds = static_cast<int>(rng() % 3000);
      for (int i = 0; i < adds; ++i) {
        const size_t index = rng() % kRegisters;
        const auto count = static_cast<uint8_t>(std::countr_zero(rng() | (1u << 30)) + 1);
        hll::Raise(&value, index, count, round % 2 ? 3000 : 300);
      }
      const std::optional<Registers> registers = Decode(value);
      ASSERT_TRUE(registers.has_value());
      for (size_t i = 0; i < kRegisters; ++i) expected[i] = std::max(expected[i], (*registers)[i]);
      ASSERT_TRUE(hll::MergeInto(value, merged.data()));
    }
    EXPECT_EQ(merged, expected) << round;
  }
}

TEST(HyperLogLogTest, CorruptSparseCodes) {
  hll::Histogram histogram{};
  Registers registers(kRegisters, 0);
  // XZERO 16383: one register short.
  const std::string short_code = Sparse("7ffe");
  EXPECT_FALSE(hll::Count(short_code).has_value());
  EXPECT_FALSE(hll::MergeInto(short_code, registers.data()));
  std::string copy = short_code;
  EXPECT_FALSE(hll::SparseToDense(&copy));
  EXPECT_EQ(copy, short_code);
  // No opcodes at all, and two XZERO 16384s (an overflow).
  EXPECT_FALSE(hll::Count(Sparse("")).has_value());
  EXPECT_FALSE(hll::SparseHistogram(Unhex("7fff7fff"), &histogram));
  // A register past the code's end cannot be edited; one inside it can (Redis edits it too).
  std::string value = Sparse("4fff");  // XZERO 4096
  EXPECT_EQ(hll::Raise(&value, 5000, 3, 3000), hll::RaiseResult::kCorrupt);
  EXPECT_EQ(hll::Raise(&value, 10, 3, 3000), hll::RaiseResult::kRaised);
  EXPECT_EQ(Hex(value.substr(16)), "09884ff4");
  EXPECT_FALSE(hll::CacheValid(reinterpret_cast<const uint8_t*>(value.data())));
  // An XZERO whose second byte is missing reads it as 0: XZERO 255, then 0x7f = 16129 zeros.
  const std::string cut = Sparse("40fe7f");
  EXPECT_EQ(hll::Count(cut), 0u);
  EXPECT_EQ(hll::DecodeSparse(cut.substr(16)), "Z:255 Z:16129");
  // A count above what a VAL holds turns even a corrupt-looking edit into a conversion.
  std::string too_short = Sparse("7ffe");
  EXPECT_EQ(hll::Raise(&too_short, 0, 40, 3000), hll::RaiseResult::kCorrupt);
}

// Random codes, mostly broken: every reader agrees with the decoder here on whether the code
// covers exactly 16384 registers and on what they hold, and an edit changes at most what it is
// asked to (run under the sanitizers, nothing reads past the string).
TEST(HyperLogLogTest, RandomCodesAreReadAsTheFormatSays) {
  std::mt19937_64 rng(21);
  int valid = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string code;
    const int ops = static_cast<int>(rng() % 12);
    for (int i = 0; i < ops; ++i) {
      const uint64_t kind = rng() % 4;
      if (kind == 0) {
        code += static_cast<char>(0x40 | (rng() % 64));  // XZERO, its second byte below
        if (rng() % 8 != 0) code += static_cast<char>(rng() % 256);
      } else if (kind == 1) {
        code += static_cast<char>(rng() % 64);  // ZERO
      } else if (kind == 2) {
        code += static_cast<char>(0x80 | (rng() % 128));  // VAL
      } else {
        // Exactly the registers left, often: valid codes.
        code += "\x7f\xff";
      }
    }
    const std::string value = Sparse(Hex(code));
    const std::optional<Registers> expected = Decode(value);
    valid += expected.has_value();
    ASSERT_EQ(hll::Count(value).has_value(), expected.has_value()) << Hex(code);
    Registers merged(kRegisters, 0);
    ASSERT_EQ(hll::MergeInto(value, merged.data()), expected.has_value());
    std::string dense = value;
    ASSERT_EQ(hll::SparseToDense(&dense), expected.has_value());
    if (expected) {
      ASSERT_EQ(merged, *expected);
      ASSERT_EQ(Decode(dense), expected);
      ASSERT_EQ(hll::Count(value), EstimateOf(*expected));
    }
    std::string edited = value;
    const size_t index = rng() % kRegisters;
    const auto count = static_cast<uint8_t>(1 + rng() % 40);
    const hll::RaiseResult result = hll::Raise(&edited, index, count, 3000);
    if (expected && result != hll::RaiseResult::kCorrupt) {
      Registers want = *expected;
      want[index] = std::max(want[index], count);
      ASSERT_EQ(Decode(edited), want) << Hex(code) << " " << index << " " << int{count};
    }
    hll::DecodeSparse(code);
  }
  EXPECT_GT(valid, 200);
}

TEST(HyperLogLogTest, DecodeNamesEveryOpcode) {
  // XZERO 1000, VAL 2 x1, ZERO 19, VAL 3 x2, XZERO 15362: registers 1000, 1020 and 1021.
  const std::string value = Sparse(
      "43e7"
      "84"
      "12"
      "89"
      "7c01");
  EXPECT_EQ(hll::DecodeSparse(value.substr(16)), "Z:1000 v:2,1 z:19 v:3,2 Z:15362");
  const std::optional<Registers> registers = Decode(value);
  ASSERT_TRUE(registers.has_value());
  EXPECT_EQ((*registers)[1000], 2);
  EXPECT_EQ((*registers)[1020], 3);
  EXPECT_EQ((*registers)[1021], 3);
  EXPECT_EQ(hll::DecodeSparse(""), "");
}

TEST(HyperLogLogTest, SelfTestPasses) { EXPECT_EQ(hll::SelfTest(3000, 1), ""); }

}  // namespace
}  // namespace goblin
