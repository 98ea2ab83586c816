// Tests of the cell encoding and of goblin::PackedHash: integer edge cases, the Redis 7.2
// conversion rules, and seeded randomized model tests against std::unordered_map through
// growth, shrink and conversion, including SCAN under modification between calls.

#include "core/packed_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace goblin {
namespace {

std::string Text(std::optional<std::string_view> v) { return v ? std::string(*v) : "<none>"; }

// Every kind of string the tables must keep apart: integers that round-trip, integer-looking
// strings that do not, binary, empty and long strings.
const std::vector<std::string>& EdgeStrings() {
  static const std::vector<std::string> strings = {"",
                                                   "0",
                                                   "-0",
                                                   "00",
                                                   "007",
                                                   "+1",
                                                   " 1",
                                                   "1 ",
                                                   "-",
                                                   "1",
                                                   "-1",
                                                   "106",
                                                   "107",
                                                   "-107",
                                                   "255",
                                                   "256",
                                                   "65535",
                                                   "65536",
                                                   "10000001",
                                                   "1700000000",
                                                   "-1700000000",
                                                   "9223372036854775807",
                                                   "-9223372036854775808",
                                                   "9223372036854775808",
                                                   "-9223372036854775809",
                                                   "18446744073709551615",
                                                   "99999999999999999999",
                                                   "123456789012345678901",
                                                   std::string("\0", 1),
                                                   std::string("a\0b", 3),
                                                   std::string("\xfc\xfd\xfe\xff", 4),
                                                   std::string("1\0", 2),
                                                   "0x10",
                                                   "1e3",
                                                   "1.5",
                                                   std::string(127, 'x'),
                                                   std::string(128, 'y'),
                                                   std::string(300, 'z'),
                                                   std::string(16383, 'q'),
                                                   std::string(16384, 'r'),
                                                   std::string(5000, '\0')};
  return strings;
}

TEST(PackedCellTest, EveryEdgeStringRoundTripsWithItsExactText) {
  for (const std::string& s : EdgeStrings()) {
    const CellInput c = CellInput::Of(s);
    int64_t v;
    EXPECT_EQ(c.is_integer, ParseInt64(s, &v)) << s;
    std::vector<uint8_t> buf(c.EncodedSize() + 8, 0xAB);
    uint8_t* end = EncodeCell(buf.data(), c);
    EXPECT_EQ(static_cast<size_t>(end - buf.data()), c.EncodedSize()) << s;
    EXPECT_EQ(SkipCell(buf.data()), end) << s;
    CellView view;
    EXPECT_EQ(DecodeCell(buf.data(), &view), end) << s;
    char scratch[kInt64TextMax];
    EXPECT_EQ(view.Text(scratch), s);
    EXPECT_EQ(view.TextLength(), s.size()) << s;
    EXPECT_EQ(c.TextLength(), s.size()) << s;
    EXPECT_TRUE(CellMatches(buf.data(), c)) << s;
    EXPECT_EQ(DecodeCellChecked(buf.data(), end, &view), end) << s;
    // Every truncation is caught.
    for (uint8_t* cut = buf.data(); cut < end; ++cut) {
      EXPECT_EQ(DecodeCellChecked(buf.data(), cut, &view), nullptr) << s;
    }
    EXPECT_NE(buf[0], 0xFC);
    EXPECT_NE(buf[0], 0xFD);
  }
}

TEST(PackedCellTest, CellsOfDifferentStringsNeverMatch) {
  const auto& strings = EdgeStrings();
  for (const std::string& a : strings) {
    std::vector<uint8_t> buf(CellInput::Of(a).EncodedSize());
    EncodeCell(buf.data(), CellInput::Of(a));
    for (const std::string& b : strings) {
      EXPECT_EQ(CellMatches(buf.data(), CellInput::Of(b)), a == b) << a << " vs " << b;
    }
  }
}

TEST(PackedCellTest, IntegersTakeTheirValueBytes) {
  EXPECT_EQ(CellInput::Of("0").EncodedSize(), 1u);
  EXPECT_EQ(CellInput::Of("106").EncodedSize(), 1u);
  EXPECT_EQ(CellInput::Of("107").EncodedSize(), 2u);
  EXPECT_EQ(CellInput::Of("-1").EncodedSize(), 2u);
  EXPECT_EQ(CellInput::Of("10000001").EncodedSize(), 4u);
  EXPECT_EQ(CellInput::Of("1700000000").EncodedSize(), 5u);
  EXPECT_EQ(CellInput::Of("-9223372036854775808").EncodedSize(), 9u);
  EXPECT_EQ(CellInput::Of("user:00000001").EncodedSize(), 14u);
  EXPECT_EQ(CellInput::Of("007").EncodedSize(), 4u);
}

TEST(PackedCellTest, CheckedDecodeRejectsNonCanonicalCells) {
  CellView view;
  const uint8_t long_written_short[] = {0x80, 0x03, 'a', 'b', 'c'};
  EXPECT_EQ(DecodeCellChecked(long_written_short, long_written_short + 5, &view), nullptr);
  const uint8_t wide_small_int[] = {0x81, 0x05};  // 5 fits the one-byte form
  EXPECT_EQ(DecodeCellChecked(wide_small_int, wide_small_int + 2, &view), nullptr);
  const uint8_t integer_as_string[] = {0x02, '4', '2'};
  EXPECT_EQ(DecodeCellChecked(integer_as_string, integer_as_string + 3, &view), nullptr);
  const uint8_t reserved[] = {0xFE};
  EXPECT_EQ(DecodeCellChecked(reserved, reserved + 1, &view), nullptr);
}

TEST(PackedHashTest, SetGetDeleteAndIntegerText) {
  PackedHash h;
  HashLimits limits;
  char scratch[kInt64TextMax];
  EXPECT_TRUE(h.Set("f", "007", limits));
  EXPECT_TRUE(h.Set("1", "-0", limits));
  EXPECT_TRUE(h.Set("-9223372036854775808", "9223372036854775807", limits));
  EXPECT_FALSE(h.Set("f", "7", limits));
  EXPECT_EQ(Text(h.Get("f", scratch)), "7");
  EXPECT_EQ(Text(h.Get("1", scratch)), "-0");
  EXPECT_EQ(Text(h.Get("-9223372036854775808", scratch)), "9223372036854775807");
  EXPECT_EQ(Text(h.Get("01", scratch)), "<none>");
  EXPECT_EQ(h.ValueLength("1"), 2u);
  EXPECT_EQ(h.ValueLength("-9223372036854775808"), 19u);
  EXPECT_FALSE(h.ValueLength("nope").has_value());
  EXPECT_TRUE(h.Delete("1"));
  EXPECT_FALSE(h.Delete("1"));
  EXPECT_EQ(h.size(), 2u);
  EXPECT_STREQ(h.EncodingName(), "listpack");
  EXPECT_EQ(h.Validate(), "");
  const PackedStats stats = h.Stats();
  EXPECT_STREQ(stats.layout, "packed-run");
  EXPECT_EQ(stats.size, 2u);
  EXPECT_EQ(stats.bytes, h.MemoryUsage());
  PackedHash moved = std::move(h);
  EXPECT_EQ(moved.size(), 2u);
}

TEST(PackedHashTest, ConvertsAsRedis) {
  HashLimits limits;  // 128 entries, 64 bytes
  PackedHash h;
  for (int i = 0; i < 128; ++i) h.Set("f" + std::to_string(i), std::string(64, 'v'), limits);
  EXPECT_STREQ(h.EncodingName(), "listpack");
  h.Set("f0", "updating keeps the size", limits);
  EXPECT_STREQ(h.EncodingName(), "listpack");
  h.Set("f128", "x", limits);
  EXPECT_STREQ(h.EncodingName(), "hashtable");
  EXPECT_EQ(h.size(), 129u);
  EXPECT_EQ(h.Validate(), "");
  // Shrinking never converts back.
  for (int i = 0; i < 129; ++i) h.Delete("f" + std::to_string(i));
  EXPECT_STREQ(h.EncodingName(), "hashtable");
  EXPECT_EQ(h.size(), 0u);

  PackedHash by_value;
  by_value.Set("a", std::string(64, 'x'), limits);
  EXPECT_STREQ(by_value.EncodingName(), "listpack");
  by_value.Set("a", std::string(65, 'x'), limits);
  EXPECT_STREQ(by_value.EncodingName(), "hashtable");

  PackedHash by_field;
  by_field.Set(std::string(65, 'f'), "1", limits);
  EXPECT_STREQ(by_field.EncodingName(), "hashtable");

  // 65-digit-long text is not an integer, but length counts text: a 20-digit integer value is
  // 20 bytes long either way.
  PackedHash batch;
  batch.PrepareForInsert(128, 64, limits);
  EXPECT_STREQ(batch.EncodingName(), "listpack");
  batch.PrepareForInsert(129, 1, limits);
  EXPECT_STREQ(batch.EncodingName(), "hashtable");
  PackedHash batch2;
  batch2.PrepareForInsert(1, 65, limits);
  EXPECT_STREQ(batch2.EncodingName(), "hashtable");
}

// The model: what Redis would hold.
using Model = std::unordered_map<std::string, std::string>;

std::map<std::string, std::string> Contents(const PackedHash& h) {
  std::map<std::string, std::string> out;
  h.ForEach([&](std::string_view f, std::string_view v) {
    EXPECT_TRUE(out.emplace(std::string(f), std::string(v)).second) << "field listed twice";
  });
  return out;
}

void ExpectSame(const PackedHash& h, const Model& model) {
  ASSERT_EQ(h.size(), model.size());
  ASSERT_EQ(h.Validate(), "");
  const auto contents = Contents(h);
  ASSERT_EQ(contents.size(), model.size());
  for (const auto& [f, v] : model) {
    auto it = contents.find(f);
    ASSERT_TRUE(it != contents.end()) << f;
    ASSERT_EQ(it->second, v) << f;
  }
}

// Fields drawn from a pool mixing every shape of string.
class FieldSource {
 public:
  explicit FieldSource(uint64_t seed, size_t pool) : rng_(seed), pool_(pool) {}
  std::string Field() {
    const uint64_t n = rng_() % pool_;
    switch (n % 6) {
      case 0:
        return std::to_string(static_cast<int64_t>(n) - static_cast<int64_t>(pool_ / 2));
      case 1:
        return "field:" + std::to_string(n);
      case 2:
        return "0" + std::to_string(n);  // integer-looking, not an integer
      case 3:
        return std::string("b\0", 2) + std::to_string(n);
      case 4:
        return n % 60 == 4 ? std::string() : "k" + std::to_string(n) + std::string(n % 37, 'x');
      default:
        return std::to_string(n * 1000003);
    }
  }
  std::string Value() {
    const uint64_t r = rng_() % 100;
    if (r < 30) return std::to_string(static_cast<int64_t>(rng_()) >> (rng_() % 64));
    if (r < 35) return r % 2 ? "-0" : "007";
    if (r < 37) return std::string(2048 + rng_() % 3000, static_cast<char>('a' + rng_() % 26));
    if (r < 40) return "";
    return std::string(rng_() % 40, static_cast<char>('a' + rng_() % 26));
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  size_t pool_;
};

// Random writes and deletes, checked against the model after every step and in full at
// intervals; grows, then shrinks back, so segments split and merge, pages compact and the
// small form converts.
void RunModel(uint64_t seed, HashLimits limits, size_t pool, size_t steps, size_t grow_steps) {
  FieldSource source(seed, pool);
  auto& rng = source.rng();
  PackedHash h;
  Model model;
  char scratch[kInt64TextMax];
  uint64_t random_state = seed;
  for (size_t step = 0; step < steps; ++step) {
    const bool growing = step < grow_steps;
    const uint64_t op = rng() % 100;
    const std::string f = source.Field();
    if (op < (growing ? 60u : 25u)) {
      const std::string v = source.Value();
      const bool added = h.Set(f, v, limits);
      ASSERT_EQ(added, model.count(f) == 0) << f;
      model[f] = v;
    } else if (op < 90) {
      ASSERT_EQ(h.Delete(f), model.erase(f) == 1) << f;
    } else if (op < 97) {
      auto it = model.find(f);
      ASSERT_EQ(Text(h.Get(f, scratch)), it == model.end() ? "<none>" : it->second) << f;
      ASSERT_EQ(h.Contains(f), it != model.end());
      const auto len = h.ValueLength(f);
      ASSERT_EQ(len.has_value(), it != model.end());
      if (len) {
        ASSERT_EQ(*len, it->second.size());
      }
    } else if (op < 99 && !model.empty()) {
      const size_t count = rng() % 20;
      std::unordered_set<std::string> seen;
      h.RandomDistinct(count, &random_state, [&](std::string_view rf, std::string_view rv) {
        ASSERT_TRUE(seen.insert(std::string(rf)).second);
        ASSERT_EQ(model.at(std::string(rf)), rv);
      });
      ASSERT_EQ(seen.size(), std::min(count, model.size()));
      size_t calls = 0;
      h.RandomWithRepetition(count, &random_state, [&](std::string_view rf, std::string_view rv) {
        ++calls;
        ASSERT_EQ(model.at(std::string(rf)), rv);
      });
      ASSERT_EQ(calls, count);
    } else if (op == 99 && rng() % 8 == 0) {
      h.Optimize();
    }
    ASSERT_EQ(h.size(), model.size());
    if (step % 997 == 0) ExpectSame(h, model);
  }
  ExpectSame(h, model);
}

TEST(PackedHashModelTest, SmallLimitsConvertEarly) {
  RunModel(1, HashLimits{8, 6}, 2000, 20000, 12000);
}

TEST(PackedHashModelTest, DefaultLimitsGrowAndShrink) {
  RunModel(2, HashLimits{}, 30000, 60000, 40000);
}

TEST(PackedHashModelTest, StaysSmallWithinLimits) {
  // 40 distinct fields, values that mostly fit: the hash converts only on a long value.
  RunModel(3, HashLimits{128, 4096}, 60, 5000, 2500);
}

TEST(PackedHashModelTest, ManySeeds) {
  for (uint64_t seed = 10; seed < 16; ++seed) RunModel(seed, HashLimits{16, 16}, 3000, 8000, 5000);
}

// SCAN under modification: fields present for the whole scan are reported exactly once, and
// nothing is reported that was never there.
void ScanUnderChurn(uint64_t seed, size_t start_size, size_t end_size, size_t count_hint) {
  std::mt19937_64 rng(seed);
  HashLimits limits;
  PackedHash h;
  std::unordered_set<std::string> present;
  std::unordered_set<std::string> ever;
  size_t next_id = 0;
  auto add = [&] {
    const std::string f =
        (next_id % 3 == 0) ? std::to_string(next_id * 7919) : "churn:" + std::to_string(next_id);
    ++next_id;
    h.Set(f, "v", limits);
    present.insert(f);
    ever.insert(f);
  };
  for (size_t i = 0; i < start_size; ++i) add();
  std::unordered_set<std::string> whole_scan = present;  // minus anything deleted meanwhile
  std::unordered_map<std::string, int> reported;
  uint64_t cursor = 0;
  size_t calls = 0;
  const size_t budget = 1 + start_size / std::max<size_t>(count_hint, 1);
  do {
    cursor = h.Scan(cursor, count_hint,
                    [&](std::string_view f, std::string_view) { ++reported[std::string(f)]; });
    ++calls;
    // Move the size toward end_size between calls, with deletions either way.
    const double progress = double(std::min(calls, budget)) / double(budget);
    const size_t target = static_cast<size_t>(double(start_size) +
                                              (double(end_size) - double(start_size)) * progress);
    const size_t changes = 1 + rng() % (2 * std::max<size_t>(1, start_size / budget + 50));
    for (size_t i = 0; i < changes; ++i) {
      if (present.size() < target || (rng() % 4 == 0 && present.size() <= target)) {
        add();
      } else if (!present.empty()) {
        auto it = present.begin();
        std::advance(it, static_cast<long>(rng() % std::min<size_t>(present.size(), 16)));
        h.Delete(*it);
        whole_scan.erase(*it);
        present.erase(it);
      }
    }
    ASSERT_LT(calls, 10 * (start_size + end_size) + 100) << "scan does not end";
  } while (cursor != 0);
  ASSERT_EQ(h.Validate(), "");
  for (const auto& f : whole_scan) {
    auto it = reported.find(f);
    ASSERT_TRUE(it != reported.end()) << "missed " << f;
    ASSERT_EQ(it->second, 1) << "reported twice: " << f;
  }
  for (const auto& [f, n] : reported) ASSERT_TRUE(ever.count(f)) << "never present: " << f;
}

TEST(PackedHashScanTest, GrowingTable) { ScanUnderChurn(21, 2000, 60000, 10); }
TEST(PackedHashScanTest, ShrinkingTable) { ScanUnderChurn(22, 60000, 1000, 10); }
TEST(PackedHashScanTest, SteadyTableLargeCount) { ScanUnderChurn(23, 20000, 20000, 500); }
TEST(PackedHashScanTest, CountOne) { ScanUnderChurn(24, 3000, 9000, 1); }

TEST(PackedHashScanTest, WithoutChangesEveryFieldOnceAndCountRespected) {
  HashLimits limits;
  PackedHash h;
  for (int i = 0; i < 50000; ++i) h.Set("f" + std::to_string(i), std::to_string(i), limits);
  std::unordered_map<std::string, int> seen;
  uint64_t cursor = 0;
  size_t calls = 0;
  do {
    size_t n = 0;
    cursor = h.Scan(cursor, 10, [&](std::string_view f, std::string_view v) {
      ++seen[std::string(f)];
      EXPECT_EQ("f" + std::string(v), f);
      ++n;
    });
    ++calls;
    if (cursor != 0) {
      EXPECT_GE(n, 10u);
    }
    EXPECT_LE(n, 40u);
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), 50000u);
  for (const auto& [f, n] : seen) EXPECT_EQ(n, 1) << f;
  EXPECT_GT(calls, 50000u / 40);
  // A small hash answers in one call with cursor 0.
  PackedHash small;
  small.Set("a", "b", limits);
  size_t n = 0;
  EXPECT_EQ(small.Scan(12345, 1, [&](std::string_view, std::string_view) { ++n; }), 0u);
  EXPECT_EQ(n, 1u);
}

TEST(PackedHashTest, RandomFieldsAreNearlyUniform) {
  HashLimits limits;
  PackedHash h;
  constexpr int kFields = 2000;
  for (int i = 0; i < kFields; ++i) h.Set("f" + std::to_string(i), "v", limits);
  uint64_t state = 99;
  std::unordered_map<std::string, int> hits;
  constexpr int kDraws = 400000;
  h.RandomWithRepetition(kDraws, &state,
                         [&](std::string_view f, std::string_view) { ++hits[std::string(f)]; });
  ASSERT_EQ(hits.size(), static_cast<size_t>(kFields));
  int lo = kDraws, hi = 0;
  for (const auto& [f, n] : hits) {
    lo = std::min(lo, n);
    hi = std::max(hi, n);
  }
  // Expected 200 each; binomial spread alone gives roughly 150..250.
  EXPECT_GT(lo, 110);
  EXPECT_LT(hi, 310);
  // Distinct draws of most of the hash, and of all of it.
  for (size_t count : {size_t{100}, size_t{1500}, size_t{2000}, size_t{5000}}) {
    std::unordered_set<std::string> seen;
    h.RandomDistinct(count, &state, [&](std::string_view f, std::string_view) {
      EXPECT_TRUE(seen.insert(std::string(f)).second);
    });
    EXPECT_EQ(seen.size(), std::min<size_t>(count, kFields));
  }
}

TEST(PackedHashTest, DumpRestoreRoundTripsBothForms) {
  for (int n : {0, 5, 128, 129, 20000}) {
    HashLimits limits;
    PackedHash h;
    for (int i = 0; i < n; ++i) {
      h.Set(i % 2 ? std::to_string(i) : "f" + std::to_string(i),
            i % 3 ? std::to_string(i * 31) : std::string(i % 100, 'v'), limits);
    }
    std::string dump;
    h.Dump(&dump);
    PackedHash back;
    ASSERT_TRUE(PackedHash::Restore(dump, &back));
    EXPECT_EQ(back.size(), h.size());
    EXPECT_STREQ(back.EncodingName(), h.EncodingName());
    EXPECT_EQ(back.Validate(), "");
    EXPECT_EQ(Contents(back), Contents(h));
    PackedHash copy = h.Clone();
    EXPECT_EQ(Contents(copy), Contents(h));
    EXPECT_EQ(copy.Validate(), "");
    if (n <= 129) {
      for (size_t cut = 0; cut < dump.size(); ++cut) {
        EXPECT_FALSE(PackedHash::Restore(dump.substr(0, cut), &back)) << cut;
        EXPECT_EQ(back.size(), 0u);
      }
    }
  }
  // A small dump that holds a field twice is refused.
  PackedHash h;
  h.Set("a", "1", HashLimits{});
  std::string dump;
  h.Dump(&dump);
  std::string twice = dump;
  twice[1] = 2;
  twice += dump.substr(2);
  PackedHash back;
  EXPECT_FALSE(PackedHash::Restore(twice, &back));
}

TEST(PackedHashTest, OptimizeRepacksAfterDeletes) {
  HashLimits limits;
  PackedHash h;
  for (int i = 0; i < 100000; ++i) h.Set("field:" + std::to_string(i), "0123456789abcdef", limits);
  for (int i = 0; i < 100000; i += 3) h.Delete("field:" + std::to_string(i));
  const size_t before = h.MemoryUsage();
  const size_t saved = h.Optimize();
  EXPECT_EQ(h.MemoryUsage() + saved, before);
  EXPECT_GT(saved, 0u);
  EXPECT_EQ(h.Validate(), "");
  const PackedStats s = h.Stats();
  EXPECT_STREQ(s.encoding, "hashtable");
  EXPECT_STREQ(s.layout, "paged-table");
  EXPECT_EQ(s.dead_bytes, 0u);
  EXPECT_GT(s.fill, 0.97);
  char scratch[kInt64TextMax];
  EXPECT_EQ(Text(h.Get("field:1", scratch)), "0123456789abcdef");
  EXPECT_EQ(Text(h.Get("field:3", scratch)), "<none>");
}

TEST(PackedHashTest, OnlineUsersCostUnderTwentyBytesPerUser) {
  HashLimits limits;
  PackedHash h;
  constexpr int kUsers = 200000;
  for (int i = 0; i < kUsers; ++i) {
    h.Set(std::to_string(10000001 + i), std::to_string(1700000000 + i % 86400), limits);
  }
  EXPECT_LT(double(h.MemoryUsage()) / kUsers, 20.0);
  char scratch[kInt64TextMax];
  EXPECT_EQ(Text(h.Get("10000001", scratch)), "1700000000");
  EXPECT_EQ(h.Validate(), "");
}

TEST(PackedHashTest, HashOfSixteenByteFieldsStaysUnderFortyBytes) {
  HashLimits limits;
  PackedHash h;
  std::mt19937_64 rng(5);
  constexpr int kFields = 300000;
  char f[32], v[32];
  for (int i = 0; i < kFields; ++i) {
    std::snprintf(f, sizeof(f), "field:%010d", i);
    std::snprintf(v, sizeof(v), "%016llx", static_cast<unsigned long long>(rng()));
    h.Set(f, v, limits);
  }
  EXPECT_LT(double(h.MemoryUsage()) / kFields, 40.0);
}

// ---- Field deadlines ----------------------------------------------------------------------

TEST(PackedCellTest, DeadlinePrefixRoundTripsAndIsCheckedInDumps) {
  for (const std::string& text : EdgeStrings()) {
    for (int64_t deadline : {int64_t{1}, int64_t{1700000000123}, kMaxCellDeadline}) {
      CellInput in = CellInput::Of(text);
      in.deadline_ms = deadline;
      std::vector<uint8_t> bytes(in.EncodedSize());
      ASSERT_EQ(EncodeCell(bytes.data(), in), bytes.data() + bytes.size());
      ASSERT_EQ(SkipCell(bytes.data()), bytes.data() + bytes.size());
      ASSERT_EQ(CellDeadline(bytes.data()), deadline);
      CellView out;
      ASSERT_EQ(DecodeCell(bytes.data(), &out), bytes.data() + bytes.size());
      char scratch[kInt64TextMax];
      EXPECT_EQ(out.Text(scratch), text);
      EXPECT_EQ(out.deadline_ms, deadline);
      const uint8_t* end = bytes.data() + bytes.size();
      EXPECT_EQ(DecodeCellChecked(bytes.data(), end, &out, true), end);
      EXPECT_EQ(out.deadline_ms, deadline);
      // Where no deadline may be (fields, set members), the prefix makes the cell malformed.
      EXPECT_EQ(DecodeCellChecked(bytes.data(), end, &out), nullptr);
      // A cut prefix is malformed too.
      EXPECT_EQ(DecodeCellChecked(bytes.data(), bytes.data() + 5, &out, true), nullptr);
    }
  }
  // A prefix with a time of 0 is never written, so it is refused.
  const uint8_t zero[] = {0xFE, 0, 0, 0, 0, 0, 0, 0x01};
  CellView out;
  EXPECT_EQ(DecodeCellChecked(zero, zero + sizeof(zero), &out, true), nullptr);
}

TEST(PackedHashTest, DeadlinesFollowRedisRulesForWrites) {
  PackedHash h;
  const HashLimits limits;
  h.Set("a", "1", limits);
  h.Set("b", "2", limits);
  EXPECT_EQ(h.EncodingName(), std::string("listpack"));
  EXPECT_EQ(h.Deadline("a"), 0);
  EXPECT_EQ(h.Deadline("zz"), std::nullopt);
  EXPECT_FALSE(h.SetDeadline("zz", 5000));
  h.EnableFieldExpiry();
  EXPECT_EQ(h.EncodingName(), std::string("listpackex"));
  ASSERT_TRUE(h.SetDeadline("a", 5000));
  ASSERT_TRUE(h.SetDeadline("b", 7000));
  EXPECT_EQ(h.fields_with_deadline(), 2u);
  EXPECT_EQ(h.earliest_deadline_bound(), 5000);
  // HINCRBY keeps the deadline, HSET clears it.
  h.Set("a", "2", limits, /*keep_deadline=*/true);
  EXPECT_EQ(h.Deadline("a"), 5000);
  h.Set("a", "3", limits);
  EXPECT_EQ(h.Deadline("a"), 0);
  EXPECT_EQ(h.fields_with_deadline(), 1u);
  // Persisting the last one leaves the expiry block (still "listpackex", as in Redis).
  ASSERT_TRUE(h.SetDeadline("b", 0));
  EXPECT_EQ(h.fields_with_deadline(), 0u);
  EXPECT_EQ(h.earliest_deadline_bound(), 0);
  EXPECT_EQ(h.EncodingName(), std::string("listpackex"));
  EXPECT_EQ(h.Validate(), "");
  // Conversion to the large form keeps deadlines.
  h.SetDeadline("b", 9000);
  h.Set("long", std::string(100, 'x'), limits);
  EXPECT_EQ(h.EncodingName(), std::string("hashtable"));
  EXPECT_EQ(h.Deadline("b"), 9000);
  EXPECT_EQ(h.Validate(), "");
}

TEST(PackedHashTest, DeleteExpiredReclaimsOnlyPassedDeadlines) {
  for (size_t fields : {size_t{10}, size_t{3000}}) {
    PackedHash h;
    const HashLimits limits;
    h.EnableFieldExpiry();
    for (size_t i = 0; i < fields; ++i) {
      const std::string f = "f" + std::to_string(i);
      h.Set(f, "v", limits);
      if (i % 3 == 0) {
        h.SetDeadline(f, 1000);  // due
      } else if (i % 3 == 1) {
        h.SetDeadline(f, 90000);  // not yet
      }
    }
    std::set<std::string> deleted;
    size_t calls = 0;
    for (bool done = false; !done; ++calls) {
      done = h.DeleteExpired(2000, 100, [&](std::string_view f) {
                ASSERT_TRUE(deleted.emplace(f).second);
              }).round_done;
    }
    // The large form goes round in steps of about 100 entries; the small one at once.
    if (fields == 10) {
      EXPECT_EQ(calls, 1u);
    } else {
      EXPECT_GE(calls, 20u);
    }
    ASSERT_EQ(deleted.size(), (fields + 2) / 3) << fields;
    for (const std::string& f : deleted) EXPECT_EQ(std::stoul(f.substr(1)) % 3, 0u) << f;
    EXPECT_EQ(h.size(), fields - deleted.size());
    EXPECT_EQ(h.fields_with_deadline(), fields / 3);
    EXPECT_EQ(h.Validate(), "");
    // Once a round is done the earliest deadline is known exactly.
    EXPECT_EQ(h.earliest_deadline_bound(), 90000);
  }
}

// Random writes, deadline changes, deletions, expiry sweeps, dump/restore and clones, against
// a map of field -> (value, deadline), through conversion to the large form.
void RunDeadlineModel(uint64_t seed, HashLimits limits, size_t pool, size_t steps) {
  FieldSource source(seed, pool);
  auto& rng = source.rng();
  PackedHash h;
  h.EnableFieldExpiry();
  std::map<std::string, std::pair<std::string, int64_t>> model;
  int64_t now = 1000;
  for (size_t step = 0; step < steps; ++step) {
    const uint64_t op = rng() % 100;
    const std::string f = source.Field();
    auto it = model.find(f);
    if (op < 30) {
      const std::string v = source.Value();
      const bool keep = rng() % 3 == 0;
      ASSERT_EQ(h.Set(f, v, limits, keep), it == model.end());
      const int64_t deadline = keep && it != model.end() ? it->second.second : 0;
      model[f] = {v, deadline};
    } else if (op < 55) {
      const int64_t deadline =
          rng() % 4 == 0 ? 0 : now + static_cast<int64_t>(rng() % 5000);
      ASSERT_EQ(h.SetDeadline(f, deadline), it != model.end());
      if (it != model.end()) it->second.second = deadline;
    } else if (op < 70) {
      ASSERT_EQ(h.Delete(f), model.erase(f) == 1);
    } else if (op < 85) {
      const std::optional<int64_t> got = h.Deadline(f);
      ASSERT_EQ(got.has_value(), it != model.end());
      if (got) {
        ASSERT_EQ(*got, it->second.second);
      }
    } else if (op < 95) {
      now += static_cast<int64_t>(rng() % 300);
      h.DeleteExpired(now, 20, [&](std::string_view field) {
        auto gone = model.find(std::string(field));
        ASSERT_NE(gone, model.end());
        ASSERT_NE(gone->second.second, 0);
        ASSERT_LT(gone->second.second, now);
        model.erase(gone);
      });
    } else if (op < 98) {
      std::string dump;
      h.Dump(&dump);
      PackedHash restored;
      ASSERT_TRUE(PackedHash::Restore(dump, &restored));
      h = rng() % 2 ? std::move(restored) : restored.Clone();
    } else {
      h.Optimize();
    }
    ASSERT_EQ(h.size(), model.size());
    if (step % 199 == 0 || op >= 95) {
      ASSERT_EQ(h.Validate(), "") << "step " << step;
      size_t seen = 0;
      h.ForEachWithDeadline([&](std::string_view field, std::string_view value, int64_t deadline) {
        const auto& [want_value, want_deadline] = model.at(std::string(field));
        ASSERT_EQ(value, want_value);
        ASSERT_EQ(deadline, want_deadline);
        ++seen;
      });
      ASSERT_EQ(seen, model.size());
    }
  }
}

TEST(PackedHashDeadlineModelTest, SmallForm) { RunDeadlineModel(31, HashLimits{4096, 4096}, 80, 6000); }
TEST(PackedHashDeadlineModelTest, ConvertsToLarge) { RunDeadlineModel(32, HashLimits{16, 16}, 3000, 20000); }
TEST(PackedHashDeadlineModelTest, ManySeeds) {
  for (uint64_t seed = 40; seed < 46; ++seed) RunDeadlineModel(seed, HashLimits{32, 32}, 500, 5000);
}

// A deadline costs its 7-byte prefix, whether it is given as each field is written (the
// entry grows where it lies) or to every field afterwards (each entry is rewritten; the old
// pages empty and go).
TEST(PackedHashTest, DeadlinesCostSevenBytesPerField) {
  for (bool afterwards : {false, true}) {
    PackedHash plain, timed;
    const HashLimits limits;
    timed.EnableFieldExpiry();
    auto field_of = [](int i) {
      char field[17];
      std::snprintf(field, sizeof(field), "f%015d", i);
      return std::string(field);
    };
    for (int i = 0; i < 200000; ++i) {
      char value[17];
      std::snprintf(value, sizeof(value), "v%015d", i);
      plain.Set(field_of(i), value, limits);
      timed.Set(field_of(i), value, limits);
      if (!afterwards) timed.SetDeadline(field_of(i), 4102444800000 + i);
    }
    for (int i = 0; afterwards && i < 200000; ++i) {
      timed.SetDeadline(field_of(i), 4102444800000 + i);
    }
    const double extra = (double(timed.MemoryUsage()) - double(plain.MemoryUsage())) / 200000;
    EXPECT_LT(extra, 8.5) << "afterwards " << afterwards;
    EXPECT_GT(extra, 6.0) << "afterwards " << afterwards;
  }
}

}  // namespace
}  // namespace goblin
